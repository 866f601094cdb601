using System;
using System.Net;
using System.Net.Http;
using System.Threading;
using System.Threading.Tasks;

namespace LazyBreaker.Extensions.Tests;

/// <summary>An upstream in memory: answers what <see cref="Answer"/> says and counts what reached it.</summary>
internal sealed class StubUpstream : HttpMessageHandler
{
    public Func<HttpRequestMessage, CancellationToken, Task<HttpResponseMessage>> Answer { get; set; } =
        (_, _) => Task.FromResult(new HttpResponseMessage(HttpStatusCode.OK));

    public int Received { get; private set; }

    public void AnswerStatus(HttpStatusCode status) => Answer = (_, _) => Task.FromResult(new HttpResponseMessage(status));

    protected override Task<HttpResponseMessage> SendAsync(HttpRequestMessage request, CancellationToken cancellationToken)
    {
        Received++;
        return Answer(request, cancellationToken);
    }
}
