package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/genesis-toolchain/genesis/runtime"
)

// TestGrimoireConformance runs the core and tooling rows of the Grimoire
// conformance matrix (tests/grimoire/conformance-expected.json, copied
// from the reference) on the corpus spells they name, with mock tools
// that answer every action, and compares the emitted events, written as
// the matrix writes them: name(key=value, …). A payload written "(...)"
// or holding <tool_result> is compared by name only. Rows with
// by_trigger run once per trigger, rows with a trigger with that trigger.
func TestGrimoireConformance(t *testing.T) {
	if testing.Short() {
		t.Skip("builds Go programs")
	}
	useRunCache(t)
	data, err := os.ReadFile("../../tests/grimoire/conformance-expected.json")
	if err != nil {
		t.Fatal(err)
	}
	var matrix map[string]json.RawMessage
	if err := json.Unmarshal(data, &matrix); err != nil {
		t.Fatal(err)
	}
	type row struct {
		Events    []string            `json:"events"`
		OneOf     [][]string          `json:"events_one_of"`
		ByTrigger map[string][]string `json:"by_trigger"`
		Halt      string              `json:"halt_reason"`
		Trigger   string              `json:"trigger"`
	}
	dir := t.TempDir()
	tools := filepath.Join(dir, "tools.json")
	os.WriteFile(tools, []byte(`{"__default__": {"tx": "0xsimulated", "amount_out": 1}}`), 0o644)
	for _, group := range []string{"core", "tooling"} {
		var rows map[string]row
		if err := json.Unmarshal(matrix[group], &rows); err != nil {
			t.Fatal(err)
		}
		names := make([]string, 0, len(rows))
		for name := range rows {
			names = append(names, name)
		}
		sort.Strings(names)
		for _, name := range names {
			r := rows[name]
			spell := filepath.Join("../../tests/grimoire/corpus/grimoire", strings.TrimPrefix(name, "spells/"))
			t.Run(group+"/"+filepath.Base(name), func(t *testing.T) {
				t.Parallel()
				// A row's trigger is the one the matrix invokes: a spell
				// whose only trigger is hourly or daily runs nothing by
				// default (grimoire-vm.md: "MAY be invoked manually").
				runs := map[string][]string{r.Trigger: r.Events}
				if r.ByTrigger != nil {
					runs = r.ByTrigger
				}
				for trig, want := range runs {
					args := []string{"genesisc", "run", "--tools", "mock:" + tools}
					if trig != "" {
						args = append(args, "--trigger", trig)
					}
					if trig == "event" {
						args = append(args, "--event", "risk.alert")
					}
					var out, errs bytes.Buffer
					run(append(args, spell), &out, &errs)
					res, err := runtime.ParseResult(out.Bytes())
					if err != nil {
						t.Fatalf("%s: no result: %v\n%s", trig, err, errs.String())
					}
					got := matrixEvents(res)
					if r.OneOf != nil {
						ok := false
						for _, w := range r.OneOf {
							ok = ok || sameEvents(got, w)
						}
						if !ok {
							t.Errorf("events %q, want one of %q", got, r.OneOf)
						}
						continue
					}
					if want == nil && r.Halt == "" && r.Events == nil {
						// "should fail on tool error": the mock tools succeed,
						// so only the run itself is checked.
						continue
					}
					if !sameEvents(got, want) {
						t.Errorf("%s: events %q, want %q", trig, got, want)
					}
					if r.Halt != "" {
						if h, _ := res.Exports.Get("halt_reason"); h.Str() != r.Halt || res.Status != "failed" {
							t.Errorf("status %s, halt reason %v, want failed with %q", res.Status, h, r.Halt)
						}
					}
				}
			})
		}
	}
}

// sameEvents compares events with the matrix's: "(...)" and
// <tool_result> match any payload.
func sameEvents(got, want []string) bool {
	if len(got) != len(want) {
		return false
	}
	for i := range got {
		if strings.HasSuffix(want[i], "(...)") || strings.Contains(want[i], "<tool_result>") {
			if got[i][:strings.IndexByte(got[i], '(')] != want[i][:strings.IndexByte(want[i], '(')] {
				return false
			}
			continue
		}
		if got[i] != want[i] {
			return false
		}
	}
	return true
}

// matrixEvents writes a result's events as the matrix does.
func matrixEvents(res *runtime.Result) []string {
	var out []string
	for _, e := range res.Events {
		var sb strings.Builder
		sb.WriteString(e.Name)
		sb.WriteByte('(')
		for i, f := range e.Payload.Fields() {
			if i > 0 {
				sb.WriteString(", ")
			}
			sb.WriteString(f.Key + "=")
			writeMatrixValue(&sb, f.Value)
		}
		sb.WriteByte(')')
		out = append(out, sb.String())
	}
	return out
}

func writeMatrixValue(sb *strings.Builder, v runtime.Value) {
	switch v.Kind() {
	case runtime.KindString:
		sb.WriteString(strconv.Quote(v.Str()))
	case runtime.KindList:
		sb.WriteByte('[')
		for i, x := range v.Elems() {
			if i > 0 {
				sb.WriteString(", ")
			}
			writeMatrixValue(sb, x)
		}
		sb.WriteByte(']')
	case runtime.KindObject:
		sb.WriteByte('{')
		for i, f := range v.Fields() {
			if i > 0 {
				sb.WriteString(", ")
			}
			sb.WriteString(f.Key + ":")
			writeMatrixValue(sb, f.Value)
		}
		sb.WriteByte('}')
	default:
		sb.Write(runtime.AppendJSON(nil, v))
	}
}

// TestGrimoireStateAcrossRuns runs a spell with persistent and ephemeral
// state twice on one --state store, an SQLite database: the persistent
// counter goes on from the first run's value, the ephemeral one starts
// over, and the trace's run_started names the backend.
func TestGrimoireStateAcrossRuns(t *testing.T) {
	if testing.Short() {
		t.Skip("builds Go programs")
	}
	useRunCache(t)
	dir := t.TempDir()
	spell := filepath.Join("../../tests/grimoire/corpus/grimoire/test-ephemeral-state.spell")
	store := filepath.Join(dir, "state")
	for i, want := range []string{
		"state_check(persistent_runs=1, ephemeral_temp=20, ephemeral_sum=10)",
		"state_check(persistent_runs=2, ephemeral_temp=20, ephemeral_sum=10)",
	} {
		var out, errs bytes.Buffer
		trace := filepath.Join(dir, "trace.jsonl")
		if code := run([]string{"genesisc", "run", "--state", store, "--trace", trace, spell}, &out, &errs); code != 0 {
			t.Fatalf("run %d: exit %d\n%s", i+1, code, errs.String())
		}
		if data, _ := os.ReadFile(store); !bytes.HasPrefix(data, []byte("SQLite format 3\x00")) {
			t.Errorf("run %d: the store is not an SQLite database", i+1)
		}
		if data, _ := os.ReadFile(trace); !bytes.Contains(data, []byte(`"state":{"backend":"sqlite","path":`+strconv.Quote(store)+`}`)) {
			t.Errorf("run %d: run_started does not name the backend:\n%.300s", i+1, data)
		}
		res, err := runtime.ParseResult(out.Bytes())
		if err != nil {
			t.Fatal(err)
		}
		if got := matrixEvents(res); len(got) != 1 || got[0] != want {
			t.Errorf("run %d: events %q, want %q", i+1, got, want)
		}
	}
}

// TestGrimoireCastConfirm runs a cast-mode action without --yes: the run
// suspends (exit 3) on the confirmation wait, before the action; resumed
// with {"confirm": true} it performs the action, resumed with
// {"confirm": false} it fails with kind "declined" and never calls the
// tool. With --yes the action runs without suspending.
func TestGrimoireCastConfirm(t *testing.T) {
	if testing.Short() {
		t.Skip("builds Go programs")
	}
	useRunCache(t)
	dir := t.TempDir()
	spell := filepath.Join(dir, "swap.spell")
	os.WriteFile(spell, []byte(`spell CastSwap
  venues:
    dex: @uniswap
  on manual:
    tx = dex.swap(1)
    emit swapped(tx=tx)
`), 0o644)
	tools := filepath.Join(dir, "tools.json")
	os.WriteFile(tools, []byte(`{"dex.swap": "0xabc"}`), 0o644)
	runSpell := func(wantExit int, args ...string) *runtime.Result {
		t.Helper()
		var out, errs bytes.Buffer
		all := append([]string{"genesisc", "run", "--tools", "mock:" + tools, "--mode", "cast"}, args...)
		if code := run(append(all, spell), &out, &errs); code != wantExit {
			t.Fatalf("%q: exit %d, want %d\n%s%s", args, code, wantExit, out.String(), errs.String())
		}
		res, err := runtime.ParseResult(out.Bytes())
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	called := func(res *runtime.Result) bool {
		for _, s := range res.Steps {
			if s == "dex.swap" {
				return true
			}
		}
		return false
	}
	for _, tc := range []struct {
		payload  string
		status   runtime.Status
		kind     string // the run's error kind
		swapped  bool
		wantExit int
	}{
		{`{"confirm": true}`, runtime.StatusSuccess, "", true, 0},
		{`{"confirm": false}`, runtime.StatusFailed, "declined", false, 1},
	} {
		journal := filepath.Join(dir, "run.journal")
		os.Remove(journal)
		res := runSpell(3, "--journal", journal)
		if res.Status != runtime.StatusSuspended || called(res) {
			t.Fatalf("first run: status %s, steps %q; want suspended before dex.swap", res.Status, res.Steps)
		}
		res = runSpell(tc.wantExit, "--journal", journal, "--resume", "--payload", tc.payload)
		kind := ""
		if res.Error != nil {
			kind = res.Error.Kind
		}
		if res.Status != tc.status || kind != tc.kind || called(res) != tc.swapped {
			t.Errorf("resumed with %s: status %s, error kind %q, steps %q; want %s, %q, dex.swap called %v",
				tc.payload, res.Status, kind, res.Steps, tc.status, tc.kind, tc.swapped)
		}
	}
	if res := runSpell(0, "--yes"); res.Status != runtime.StatusSuccess || !called(res) {
		t.Errorf("--yes: status %s, steps %q", res.Status, res.Steps)
	}
}

// TestGrimoireRealClock runs a spell's wait with --real-clock, through
// genesisc run as through a compiled main: the wait really waits, cut at
// --max-wall (the run ends budget_exceeded, limit.wall, and the trace says
// the clock is real); without the flag the clock is virtual, the run
// ends at once and the trace notes that the wait did not happen.
func TestGrimoireRealClock(t *testing.T) {
	if testing.Short() {
		t.Skip("builds Go programs")
	}
	useRunCache(t)
	dir := t.TempDir()
	spell := filepath.Join(dir, "wait.spell")
	os.WriteFile(spell, []byte(`spell Waits
  on manual:
    wait 1h
    emit after_wait
`), 0o644)
	trace := filepath.Join(dir, "trace.jsonl")
	var out, errs bytes.Buffer
	if code := run([]string{"genesisc", "run", "--real-clock", "--max-wall", "300ms", "--trace", trace, spell}, &out, &errs); code != 1 {
		t.Fatalf("--real-clock: exit %d, want 1\n%s%s", code, out.String(), errs.String())
	}
	res, err := runtime.ParseResult(out.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != runtime.StatusBudgetExceeded || res.Error == nil || res.Error.Kind != "limit.wall" || len(res.Events) != 0 {
		t.Errorf("--real-clock: status %s, error %+v, events %v; want budget_exceeded (limit.wall) before the emit", res.Status, res.Error, res.Events)
	}
	if data, _ := os.ReadFile(trace); !bytes.Contains(data, []byte(`"clock":"real"`)) || bytes.Contains(data, []byte("virtual_clock")) {
		t.Errorf("--real-clock trace:\n%s", data)
	}
	out.Reset()
	if code := run([]string{"genesisc", "run", "--trace", trace, spell}, &out, &errs); code != 0 {
		t.Fatalf("virtual clock: exit %d\n%s%s", code, out.String(), errs.String())
	}
	if data, _ := os.ReadFile(trace); !bytes.Contains(data, []byte(`"kind":"virtual_clock","text":"did not wait 1h0m0s`)) {
		t.Errorf("the virtual clock's trace does not note the wait:\n%s", data)
	}
}
