//go:build lbquietvectors

package lazybreaker

// The quiet path's rules (quiet_rules.go, the functions Acquire and Done
// call) against the vectors that include/lazybreaker/fastpath.h's own
// functions compute (tests/quiet_vectors; docs/fastpath.md). CTest runs it
// as go.quiet_vectors, with LB_QUIET_VECTORS naming the file; run without
// the file, it fails. The build tag keeps it out of a plain `go test`,
// which has no file to read.

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
)

var quietDecisionNames = [...]string{quietLibrary: "library", quietAdmit: "admit", quietReject: "reject"}

// quietVectorFields parses a vector's numbers (hex, 64 bits) at the given
// positions of fields.
func quietVectorFields(fields []string, positions ...int) ([]uint64, error) {
	values := make([]uint64, len(positions))
	for i, at := range positions {
		v, err := strconv.ParseUint(fields[at], 16, 64)
		if err != nil {
			return nil, fmt.Errorf("field %d: %v", at+1, err)
		}
		values[i] = v
	}
	return values, nil
}

// checkQuietVector checks one vector line; it returns the line's kind, and
// an error saying what this port decides where the header decided otherwise.
func checkQuietVector(line string) (string, error) {
	fields := strings.Split(line, " ")
	want := map[string]int{"allow": 8, "done": 6, "count": 6}[fields[0]]
	if want == 0 {
		return "", fmt.Errorf("unknown vector kind %q", fields[0])
	}
	if len(fields) != want {
		return "", fmt.Errorf("%d fields, want %d", len(fields), want)
	}
	switch fields[0] {
	case "allow":
		v, err := quietVectorFields(fields, 1, 2, 3, 4, 5, 7)
		if err != nil {
			return "", err
		}
		h, w, p, lean, now, ticket := v[0], v[1], v[2], v[3], v[4], v[5]
		if lean > 0xff {
			return "", fmt.Errorf("lean %x is no byte", lean)
		}
		leanByte := uint8(lean)
		d, t, _ := quietAllow(h, w, quietInputs{lean: &leanByte, openPeriod: &p, now: func() int64 { return int64(now) }})
		if quietDecisionNames[d] != fields[6] || uint64(t) != ticket {
			return "", fmt.Errorf("this port says %s %x", quietDecisionNames[d], uint64(t))
		}
	case "done":
		v, err := quietVectorFields(fields, 1, 2, 3, 4)
		if err != nil {
			return "", err
		}
		got := "library"
		if quietDone(v[0], v[1], Ticket(v[2]), Outcome(int32(uint32(v[3])))) {
			got = "success"
		}
		if got != fields[5] {
			return "", fmt.Errorf("this port says %s", got)
		}
	case "count":
		v, err := quietVectorFields(fields, 1, 2, 3, 4, 5)
		if err != nil {
			return "", err
		}
		if v[1] > counterSuccesses {
			return "", fmt.Errorf("counter %x is none of the quiet path's", v[1])
		}
		cell, fold := quietCount(v[0], uint(v[1]), v[2])
		wantFold := v[4] != 0
		if cell != v[3] || fold != wantFold {
			return "", fmt.Errorf("this port says %x %v", cell, fold)
		}
	}
	return fields[0], nil
}

func TestQuietPathDecidesAsTheVectors(t *testing.T) {
	path := os.Getenv("LB_QUIET_VECTORS")
	if path == "" {
		t.Fatal("LB_QUIET_VECTORS is not set: it names the vectors that tests/quiet_vectors writes")
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatalf("LB_QUIET_VECTORS: %v", err)
	}
	defer f.Close()
	checked := map[string]int{}
	lines := bufio.NewScanner(f)
	for n := 1; lines.Scan(); n++ {
		line := lines.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		kind, err := checkQuietVector(line)
		if err != nil {
			t.Fatalf("%s:%d: %s: %v", path, n, line, err)
		}
		checked[kind]++
	}
	if err := lines.Err(); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	t.Logf("%s: checked %d allow, %d done and %d count vectors", path, checked["allow"], checked["done"], checked["count"])
	for _, kind := range []string{"allow", "done", "count"} {
		if checked[kind] == 0 {
			t.Errorf("%s holds no %s vector", path, kind)
		}
	}
}
