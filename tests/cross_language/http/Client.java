// The Java client of one_upstream.py: java.net.http.HttpClient wrapped by
// io.lazybreaker.http.BreakerHttpClient over the registry file. Run by the
// JDK's source launcher:
//   java -cp lazybreaker.jar Client.java REGISTRY_FILE URL

import io.lazybreaker.BreakerConfig;
import io.lazybreaker.CallNotPermittedException;
import io.lazybreaker.Registry;
import io.lazybreaker.RegistryOptions;
import io.lazybreaker.http.BreakerHttpClient;
import io.lazybreaker.http.UpstreamBreakers;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;

public class Client {
  public static void main(String[] args) throws Exception {
    String file = args[args.length - 2];
    URI url = URI.create(args[args.length - 1]);
    try (Registry registry = Registry.open(RegistryOptions.builder().path(file).create(true).build())) {
      BreakerConfig config =
          BreakerConfig.builder().failureThreshold(1).waitDurationInOpenState(Duration.ofSeconds(2)).build();
      HttpClient client =
          BreakerHttpClient.wrap(HttpClient.newHttpClient(), UpstreamBreakers.byConvention(registry, config));
      System.out.println("ready");
      BufferedReader lines = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
      while (lines.readLine() != null) {
        try {
          HttpResponse<Void> response =
              client.send(HttpRequest.newBuilder(url).build(), HttpResponse.BodyHandlers.discarding());
          System.out.println("sent " + response.statusCode());
        } catch (CallNotPermittedException e) {
          System.out.println("rejected");
        }
      }
    }
  }
}
