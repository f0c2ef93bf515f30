package journal

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func sample() *Journal {
	trace := [32]byte{9, 9}
	return &Journal{
		Header: Header{Program: [32]byte{1, 2, 3}, Ticks: 1000, Memory: 1 << 20, Stack: 4096, Output: 1 << 16, Grant: 0b1000000111},
		Deliveries: []Delivery{
			{Ticks: 5, Ch: 2, Data: []byte("hello")},
			{Ticks: 5, Ch: 9, Data: []byte{0, 255}},
			{Ticks: 17, Ch: 2, Data: []byte{}},
		},
		End: &End{State: "FAULTED", Fault: "USER_FAULT", FaultCode: 255, UserCode: 7, PC: 64, TicksUsed: 99,
			Input: [32]byte{4}, Output: [32]byte{5}, TraceHash: &trace},
		Version: Version,
	}
}

func write(t *testing.T, j *Journal) string {
	t.Helper()
	var buf bytes.Buffer
	w, err := NewWriter(&buf, j.Header)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range j.Deliveries {
		if err := w.Deliver(d.Ticks, d.Ch, d.Data); err != nil {
			t.Fatal(err)
		}
	}
	if j.End != nil {
		if err := w.Finish(*j.End); err != nil {
			t.Fatal(err)
		}
	}
	return buf.String()
}

func TestRoundTrip(t *testing.T) {
	want := sample()
	text := write(t, want)
	got, err := Read(strings.NewReader(text))
	if err != nil {
		t.Fatalf("%v\n%s", err, text)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("round trip:\n got %+v\nwant %+v", got, want)
	}
	lines := strings.Split(text, "\n")
	if lines[0] != `{"format":"forge-journal","version":3,"program":"0102030000000000000000000000000000000000000000000000000000000000","ticks":1000,"memory":1048576,"stack":4096,"output":65536,"grant":[0,1,2,9]}` {
		t.Errorf("header line: %s", lines[0])
	}
	if lines[1] != `{"ticks":5,"ch":2,"data":"aGVsbG8="}` {
		t.Errorf("delivery line: %s", lines[1])
	}

	// Without a result line: an interrupted run.
	want.End = nil
	got, err = Read(strings.NewReader(write(t, want)))
	if err != nil || got.End != nil || len(got.Deliveries) != 3 {
		t.Errorf("interrupted journal: %+v, %v", got, err)
	}

	// A run that did not finish has no trace hash and no fault.
	j := sample()
	j.End.TraceHash, j.End.Fault, j.End.State = nil, "", "BLOCKED"
	text = write(t, j)
	if !strings.Contains(text, `"fault":null`) || !strings.Contains(text, `"trace_hash":null`) {
		t.Errorf("nulls missing:\n%s", text)
	}
	if got, err := Read(strings.NewReader(text)); err != nil || !reflect.DeepEqual(got, j) {
		t.Errorf("round trip without trace: %+v, %v", got, err)
	}
}

// TestReadVersion2 reads a journal of the version before POLL waited:
// it is accepted, and says which version it is, so that a replay can
// tell a run that polled an empty channel from a divergence.
func TestReadVersion2(t *testing.T) {
	text := strings.Replace(write(t, sample()), `"version":3`, `"version":2`, 1)
	j, err := Read(strings.NewReader(text))
	if err != nil {
		t.Fatal(err)
	}
	if j.Version != 2 || len(j.Deliveries) != 3 || j.End == nil {
		t.Errorf("read %+v", j)
	}
}

func TestReadErrors(t *testing.T) {
	good := write(t, sample())
	lines := strings.SplitAfter(good, "\n")
	for _, tc := range []struct {
		name, text, want string
	}{
		{"empty", "", "line 1: empty journal"},
		{"truncated", good[:len(good)-1], "line 5: truncated"},
		{"not json", "hello\n", "line 1: bad header"},
		{"format", strings.Replace(lines[0], "forge-journal", "other", 1), "line 1: not a journal"},
		{"version", strings.Replace(lines[0], `"version":3`, `"version":4`, 1), "unsupported journal version 4, want 2 to 3"},
		{"version 1", strings.Replace(strings.Replace(lines[0], `"version":3`, `"version":1`, 1), `"output":65536,`, ``, 1), "journal version 1 was recorded before SEND and RECV paid for the bytes they move"},
		{"no output quota", strings.Replace(lines[0], `"output":65536,`, ``, 1), `"output" (the output quota, 0 for none) is required`},
		{"unknown field", strings.Replace(good, `"ch":2,`, `"ch":2,"x":1,`, 1), `line 2: bad delivery: json: unknown field "x"`},
		{"missing field", strings.Replace(good, `"ch":2,`, ``, 1), `line 2: bad delivery: "ticks", "ch" and "data" are all required`},
		{"bad base64", strings.Replace(good, `aGVsbG8=`, `aGVsbG8`, 1), "line 2: bad delivery data"},
		{"bad channel", strings.Replace(good, `"ch":9`, `"ch":16`, 1), "line 3: delivery on channel 16"},
		{"big channel", strings.Replace(good, `"ch":9`, `"ch":300`, 1), "line 3: bad delivery"},
		{"ticks decrease", strings.Replace(good, `"ticks":17`, `"ticks":4`, 1), "line 4: delivery at 4 ticks comes after one at 5 ticks"},
		{"after result", good + lines[1], "line 6: follows the result line"},
		{"two values", strings.Replace(good, "}\n", "} {}\n", 1), "line 1: bad header: more than one JSON value"},
		{"program hash", strings.Replace(lines[0], `"program":"01`, `"program":"1`, 1), "bad program hash"},
		{"upper-case hash", strings.Replace(lines[0], `"program":"01`, `"program":"0A`, 1), "lower-case"},
		{"grant order", strings.Replace(lines[0], `[0,1,2,9]`, `[0,2,1]`, 1), "grant list is not sorted"},
		{"no grant", strings.Replace(lines[0], `[0,1,2,9]`, `[]`, 1), "grants no channel"},
		{"empty fault", strings.Replace(good, `"fault":"USER_FAULT"`, `"fault":""`, 1), `"fault" is empty`},
		{"bad output hash", strings.Replace(good, `"output_sha256":"05`, `"output_sha256":"5`, 1), "bad output_sha256"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.text == good {
				t.Fatal("the edit changed nothing")
			}
			_, err := Read(strings.NewReader(tc.text))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got %v, want an error containing %q", err, tc.want)
			}
		})
	}
}

func TestCreateSyncs(t *testing.T) {
	path := filepath.Join(t.TempDir(), "j.jsonl")
	w, err := Create(path, Header{Grant: 7})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Deliver(3, 2, []byte("x")); err != nil {
		t.Fatal(err)
	}
	// Each line is on disk as soon as it is written.
	j, err := ReadFile(path)
	if err != nil || len(j.Deliveries) != 1 || j.End != nil {
		t.Fatalf("mid-run journal: %+v, %v", j, err)
	}
	if err := w.Finish(End{State: "HALTED"}); err != nil {
		t.Fatal(err)
	}
	if err := w.Deliver(4, 2, nil); err == nil {
		t.Error("Deliver after Finish succeeded")
	}
	if j, err := ReadFile(path); err != nil || j.End == nil {
		t.Fatalf("finished journal: %+v, %v", j, err)
	}
	if _, err := os.Stat(path); err != nil {
		t.Fatal(err)
	}
}

type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

func TestWriteError(t *testing.T) {
	if _, err := NewWriter(failWriter{}, Header{Grant: 7}); err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Errorf("got %v", err)
	}
	if _, err := NewWriter(&bytes.Buffer{}, Header{}); err == nil {
		t.Error("a header without grants was written")
	}
}
