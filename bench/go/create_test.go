package gobench

// Creating a million named breakers ("host-0000000" ...): the binding's
// NewCircuitBreaker, the C library's own cb_create in a loop in C (what the
// binding is measured against: within 1.5x), and the gobreaker-shaped
// baseline's constructor. Time is per million; memory is measured once per
// contender in a fresh process (this test binary run again with
// LB_CREATE_FOOTPRINT set), since a process that has created breakers
// before keeps its breaker space and heap: resident bytes per breaker
// (heap and native) and Go heap bytes per breaker, both net of the names
// and of the slice that holds the values.

import (
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	lazybreaker "github.com/lazybreaker/lazybreaker/bindings/go"
)

const createN = 1_000_000

var createNames = func() []string {
	names := make([]string, createN)
	for i := range names {
		names[i] = fmt.Sprintf("host-%07d", i)
	}
	return names
}()

// creators: each makes createN breakers and returns what keeps them alive
// and a function that lets them go.
var creators = map[string]func() (any, func()){
	"ours": func() (any, func()) {
		reg, err := lazybreaker.OpenRegistry(lazybreaker.RegistryOptions{Capacity: createN})
		if err != nil {
			panic(err)
		}
		kept := make([]*lazybreaker.CircuitBreaker, createN)
		for i, name := range createNames {
			if kept[i], err = reg.NewCircuitBreaker(lazybreaker.Settings{Name: name}); err != nil {
				panic(err)
			}
		}
		return kept, func() { _ = reg.Close() }
	},
	"c": func() (any, func()) {
		reg := cCreateMillion(createN)
		return nil, func() { cCloseRegistry(reg) }
	},
	"mutex": func() (any, func()) {
		kept := make([]*mutexBreaker, createN)
		for i := range kept {
			kept[i] = newMutexBreaker(5, time.Minute)
		}
		return kept, func() {}
	},
}

func BenchmarkCreate1M(b *testing.B) {
	for _, who := range []string{"ours", "c", "mutex"} {
		who := who
		b.Run(who, func(b *testing.B) {
			if runtime.GOMAXPROCS(0) != 1 {
				b.Skip("serial: one run, at GOMAXPROCS 1")
			}
			rss, heap := footprint(b, who)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				kept, release := creators[who]()
				b.StopTimer()
				runtime.KeepAlive(kept)
				release()
				b.StartTimer()
			}
			b.ReportMetric(rss, "rssB/breaker")
			b.ReportMetric(heap, "heapB/breaker")
		})
	}
}

// footprint runs this binary again to create the breakers in a fresh
// process and reads back what TestCreateFootprint printed.
func footprint(b *testing.B, who string) (rss, heap float64) {
	cmd := exec.Command(os.Args[0], "-test.run", "^TestCreateFootprint$", "-test.v")
	cmd.Env = append(os.Environ(), "LB_CREATE_FOOTPRINT="+who)
	out, err := cmd.CombinedOutput()
	if err != nil {
		b.Fatalf("footprint of %s: %v\n%s", who, err, out)
	}
	for _, line := range strings.Split(string(out), "\n") {
		if f := strings.Fields(line); len(f) == 3 && f[0] == "footprint" {
			rss, _ = strconv.ParseFloat(f[1], 64)
			heap, _ = strconv.ParseFloat(f[2], 64)
			return rss, heap
		}
	}
	b.Fatalf("footprint of %s: no figures in\n%s", who, out)
	return 0, 0
}

func TestCreateFootprint(t *testing.T) {
	who := os.Getenv("LB_CREATE_FOOTPRINT")
	if who == "" {
		t.Skip("run by BenchmarkCreate1M in a process of its own")
	}
	rss0, heap0 := residentBytes(t), heapBytes()
	kept, release := creators[who]()
	rss1, heap1 := residentBytes(t), heapBytes()
	runtime.KeepAlive(kept)
	slice := 8.0 // the caller's slice of values
	if kept == nil {
		slice = 0
	}
	fmt.Printf("footprint %.1f %.1f\n", float64(rss1-rss0)/createN-slice, float64(heap1-heap0)/createN-slice)
	release()
}

func heapBytes() int64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapAlloc)
}

func residentBytes(t *testing.T) int64 {
	runtime.GC()
	statm, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		t.Fatal(err)
	}
	f := strings.Fields(string(statm))
	pages, _ := strconv.ParseInt(f[1], 10, 64)
	return pages * int64(os.Getpagesize())
}
