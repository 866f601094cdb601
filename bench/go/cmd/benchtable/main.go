// Command benchtable runs the Go benchmark binary given after "--" -passes
// times (10: as -count 10, but interleaved, one pass over every benchmark
// at a time, so a burst of noise on a shared machine is spread over all of
// them rather than one), shows its output as it comes, keeps a copy (-out),
// and prints the median of each benchmark's runs with B/op and allocs/op,
// then the ratios the targets of issues 13 and 24 are stated in.
//
//	benchtable -passes 10 -out go-bench.txt -- ./bench.test -test.run '^$' -test.bench . \
//	    -test.benchmem -test.cpu 1,2
package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// BenchmarkAcquireDone/closed/serial-2   1000000   73.1 ns/op   0 B/op   0 allocs/op
// (a benchmark's own metrics, "97.0 heapB/breaker", come before B/op)
var line = regexp.MustCompile(`^Benchmark(\S+?)(?:-(\d+))?\s+\d+\s+([0-9.]+) ns/op((?:\s+[0-9.]+ \S+)*?)\s+([0-9.]+) B/op\s+([0-9.]+) allocs/op`)

var metric = regexp.MustCompile(`([0-9.]+) (\S+)`)

type key struct {
	name  string
	procs int
}

type runs struct {
	ns, bytes, allocs []float64
	metrics           map[string][]float64
}

func median(v []float64) float64 {
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	if len(s) == 0 {
		return 0
	}
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func main() {
	out := flag.String("out", "", "a copy of the benchmark's output")
	passes := flag.Int("passes", 10, "runs of the benchmark binary")
	flag.Parse()
	args := flag.Args()
	if len(args) == 0 || *passes < 1 {
		fmt.Fprintln(os.Stderr, "usage: benchtable [-passes N] [-out FILE] -- BENCHMARK-BINARY ARGS...")
		os.Exit(2)
	}
	sinks := []io.Writer{os.Stdout}
	if *out != "" {
		f, err := os.Create(*out)
		if err != nil {
			fail(err)
		}
		defer f.Close()
		sinks = append(sinks, f)
	}
	copyTo := io.MultiWriter(sinks...)
	results := map[key]*runs{}
	var order []string
	seen := map[string]bool{}
	for pass := 1; pass <= *passes; pass++ {
		fmt.Fprintf(copyTo, "# pass %d of %d\n", pass, *passes)
		cmd := exec.Command(args[0], args[1:]...)
		cmd.Stderr = os.Stderr
		pipe, err := cmd.StdoutPipe()
		if err != nil {
			fail(err)
		}
		if err := cmd.Start(); err != nil {
			fail(err)
		}
		collect(pipe, copyTo, results, &order, seen)
		if err := cmd.Wait(); err != nil {
			fail(fmt.Errorf("%s: %w", args[0], err))
		}
	}
	report(results, order, *out)
}

// collect copies the benchmark's output and files each result line.
func collect(pipe io.Reader, copyTo io.Writer, results map[key]*runs, order *[]string, seen map[string]bool) {
	sc := bufio.NewScanner(pipe)
	for sc.Scan() {
		fmt.Fprintln(copyTo, sc.Text())
		m := line.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		procs := 1
		if m[2] != "" {
			procs, _ = strconv.Atoi(m[2])
		}
		k := key{m[1], procs}
		if results[k] == nil {
			results[k] = &runs{metrics: map[string][]float64{}}
		}
		r := results[k]
		for i, dst := range []*[]float64{&r.ns, &r.bytes, &r.allocs} {
			v, _ := strconv.ParseFloat(m[[]int{3, 5, 6}[i]], 64)
			*dst = append(*dst, v)
		}
		for _, mm := range metric.FindAllStringSubmatch(m[4], -1) {
			v, _ := strconv.ParseFloat(mm[1], 64)
			r.metrics[mm[2]] = append(r.metrics[mm[2]], v)
		}
		if !seen[m[1]] {
			seen[m[1]] = true
			*order = append(*order, m[1])
		}
	}
}

func report(results map[key]*runs, order []string, out string) {
	if len(order) == 0 {
		fail(fmt.Errorf("no benchmark results"))
	}
	ns := func(name string, procs int) float64 {
		if r := results[key{name, procs}]; r != nil {
			return median(r.ns)
		}
		return 0
	}

	fmt.Printf("\nGo binding: medians of %d runs (ns per call; B and allocs per call at GOMAXPROCS 2)\n\n", len(results[key{order[0], 1}].ns))
	fmt.Printf("%-36s %14s %14s %8s %8s\n", "benchmark", "GOMAXPROCS=1", "GOMAXPROCS=2", "B/op", "allocs")
	for _, name := range order {
		r2 := results[key{name, 2}]
		b, a := 0.0, 0.0
		if r2 != nil {
			b, a = median(r2.bytes), median(r2.allocs)
		}
		fmt.Printf("%-36s %14.1f %14.1f %8.0f %8.0f\n", name, ns(name, 1), ns(name, 2), b, a)
	}

	fmt.Printf("\nRatios (of medians; > 1: the first is slower)\n\n")
	ratio := func(what string, a, b float64) float64 {
		r := 0.0
		if b > 0 {
			r = a / b
		}
		fmt.Printf("  %-68s %6.2fx\n", what, r)
		return r
	}
	for _, procs := range []int{1, 2} {
		for _, mode := range []string{"serial", "parallel"} {
			ratio(fmt.Sprintf("Acquire+Done CLOSED %s / floor %s, GOMAXPROCS %d", mode, mode, procs),
				ns("AcquireDone/closed/"+mode, procs), ns("Floor/"+mode, procs))
		}
	}
	for _, shape := range []string{"AcquireDone", "AllowDone", "Execute"} {
		for _, state := range []string{"closed", "open"} {
			for _, procs := range []int{1, 2} {
				for _, mode := range []string{"serial", "parallel"} {
					b := shape + "/" + state + "/" + mode
					ratio(fmt.Sprintf("mutex %s / ours, GOMAXPROCS %d", b, procs), ns("Mutex"+b, procs), ns(b, procs))
				}
			}
		}
	}

	bare, wrapped := ns("Transport/loopback/bare", 1), ns("Transport/loopback/lazybreaker", 1)
	added := ns("Transport/roundtrip/lazybreaker", 1) - ns("Transport/roundtrip/bare", 1)
	if r := results[key{"Transport/roundtrip/lazybreaker", 1}]; bare > 0 && r != nil {
		fmt.Printf("\nHTTP Transport (GOMAXPROCS 1): a loopback GET %.0f ns bare, %.0f ns through lazybreaker.Transport (%.2fx);\n",
			bare, wrapped, wrapped/bare)
		fmt.Printf("  RoundTrip's own added cost %.1f ns = %.3f %% of the bare loopback GET, %.0f allocs\n",
			added, 100*added/bare, median(r.allocs))
	}

	fmt.Printf("\nThe parts: one time.Now() %.1f ns (the baseline reads two per call), one empty cgo crossing %.1f ns (ours make two)\n",
		ns("Parts/time_now", 1), ns("Parts/cgo_crossing", 1))
	spin := ns("Spin/serial", 2) / ns("Spin/parallel", 2)
	fmt.Printf("Machine check: a pure-Go loop runs %.2fx faster in parallel at GOMAXPROCS 2 than serially (2x: a second core was free;", spin)
	fmt.Printf(" near 1x: it was not, and the parallel figures above measure the machine's load, not the breakers)\n")

	fmt.Printf("\nTargets (issue 13)\n\n")
	verdict := func(ok bool) string {
		if ok {
			return "met"
		}
		return "MISSED"
	}
	floor := ns("AcquireDone/closed/serial", 1) / ns("Floor/serial", 1)
	fmt.Printf("  Acquire+Done within 1.3x of the empty cgo pair (serial, GOMAXPROCS 1): %.2fx  %s\n", floor, verdict(floor <= 1.3))
	allocs := 0.0
	for _, name := range []string{"AcquireDone/closed/serial", "AcquireDone/closed/parallel", "AcquireDone/open/serial", "AcquireDone/open/parallel"} {
		for _, procs := range []int{1, 2} {
			if r := results[key{name, procs}]; r != nil && median(r.allocs) > allocs {
				allocs = median(r.allocs)
			}
		}
	}
	fmt.Printf("  Acquire+Done allocates nothing (CLOSED and OPEN): %.0f allocs/op  %s\n", allocs, verdict(allocs == 0))
	serial := ns("MutexAcquireDone/closed/serial", 1) / ns("AcquireDone/closed/serial", 1)
	fmt.Printf("  at least 2x faster than the mutex baseline serially (CLOSED, GOMAXPROCS 1): %.2fx  %s\n", serial, verdict(serial >= 2))
	parallel := ns("MutexAcquireDone/closed/parallel", 2) / ns("AcquireDone/closed/parallel", 2)
	fmt.Printf("  at least 5x faster under RunParallel at GOMAXPROCS 2 (CLOSED): %.2fx  %s\n", parallel, verdict(parallel >= 5))
	issue24(results, ns, verdict)
	if strings.TrimSpace(out) != "" {
		fmt.Printf("\n(raw output: %s)\n", out)
	}
}

// issue24 prints the targets of issue 24: the quiet path, rejections,
// creates. The baseline is the mutex breaker in gobreaker's shape
// (bench/go/mutexbreaker.go), not gobreaker itself, which is not served
// here.
func issue24(results map[key]*runs, ns func(string, int) float64, verdict func(bool) string) {
	med := func(name string, procs int, what string) float64 {
		r := results[key{name, procs}]
		if r == nil {
			return 0
		}
		switch what {
		case "allocs":
			return median(r.allocs)
		case "B":
			return median(r.bytes)
		}
		return median(r.metrics[what])
	}
	fmt.Printf("\nTargets (issue 24; \"mutex\" is the gobreaker-shaped baseline, not gobreaker)\n\n")
	for _, c := range []struct{ label, ours, mutex string }{
		{"consecutive", "AcquireDone/closed", "MutexExecute/closed"},
		{"count window", "WindowAcquireDone", "MutexRatioExecute"},
	} {
		t := ns(c.ours+"/serial", 1)
		fmt.Printf("  Acquire+Done CLOSED, %s, <= 25 ns (serial, GOMAXPROCS 1): %.1f ns  %s\n", c.label, t, verdict(t > 0 && t <= 25))
		r := ns(c.mutex+"/serial", 1) / t
		fmt.Printf("  ... >= 5x the mutex Execute serially: %.2fx  %s\n", r, verdict(r >= 5))
		p := ns(c.mutex+"/parallel", 2) / ns(c.ours+"/parallel", 2)
		fmt.Printf("  ... >= 8x under RunParallel at GOMAXPROCS 2: %.2fx  %s\n", p, verdict(p >= 8))
		a := med(c.ours+"/serial", 2, "allocs") + med(c.ours+"/parallel", 2, "allocs")
		fmt.Printf("  ... 0 allocs: %.0f  %s\n", a, verdict(a == 0))
	}
	for _, c := range []struct{ ours, mutex string }{
		{"AcquireDone/open", "MutexAcquireDone/open"}, {"AllowDone/open", "MutexAllowDone/open"}, {"Execute/open", "MutexExecute/open"},
	} {
		r := ns(c.ours+"/serial", 1) / ns(c.mutex+"/serial", 1)
		a := med(c.ours+"/serial", 2, "allocs")
		fmt.Printf("  OPEN %-16s <= 0.5x the mutex's time (serial, GOMAXPROCS 1), 0 allocs: %.2fx, %.0f allocs  %s\n",
			strings.SplitN(c.ours, "/", 2)[0], r, a, verdict(r <= 0.5 && a == 0))
	}
	ours, c, mutex := ns("Create1M/ours", 1), ns("Create1M/c", 1), ns("Create1M/mutex", 1)
	if ours == 0 {
		return
	}
	fmt.Printf("\n  create 1M named breakers: ours %.2f s, the C library's cb_create loop %.2f s, the mutex baseline %.2f s\n", ours/1e9, c/1e9, mutex/1e9)
	fmt.Printf("  ... within 1.5x of C's: %.2fx  %s\n", ours/c, verdict(ours <= 1.5*c))
	rss := med("Create1M/ours", 1, "rssB/breaker")
	fmt.Printf("  ... resident bytes per breaker (heap + native) <= 200: %.0f B (Go heap %.0f B; C alone %.0f B; mutex %.0f B)  %s\n",
		rss, med("Create1M/ours", 1, "heapB/breaker"), med("Create1M/c", 1, "rssB/breaker"), med("Create1M/mutex", 1, "rssB/breaker"), verdict(rss <= 200))
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "benchtable:", err)
	os.Exit(1)
}
