package runtime

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"
)

// Main is the command line of a compiled agent program: the func main
// that genesisc generates (build --target go --main) calls it, and
// `genesisc run` runs such a program with the same flags:
//
//	--llm mock:FILE|openai:URL   the LLM provider (ParseLLMWith)
//	--models FILE                the model alias file (ModelTable; default
//	                             $GENESIS_MODELS)
//	--model NAME                 every LLM call uses the provider model
//	                             NAME, whatever the program names
//	--tools SPEC                 a tool provider, repeatable (asked in
//	                             order: the first that has a tool serves
//	                             it): mock:FILE, exec:CMD, mcp:COMMAND
//	                             ARGS… (an MCP server over stdio) or
//	                             mcp+http(s)://HOST:PORT/PATH (streamable
//	                             HTTP); MCP servers start before the run
//	                             and are closed when the command ends
//	--input KEY=VALUE            an input field, repeatable; a VALUE that
//	                             parses as JSON is that JSON, else a string
//	--trace FILE                 the JSON Lines trace
//	--journal FILE               the effect journal (new unless --resume
//	                             or --replay; a FILE that already holds a
//	                             run is refused, and a journal in use by
//	                             another process too)
//	--journal-fd W,R             the journal stream, for a parent that keeps
//	                             the journal (genesisc worker): each new
//	                             journal line is written to descriptor W
//	                             and the run waits for its acknowledgement
//	                             on R ("ok", or "error REASON", which fails
//	                             the run with kind journal; StreamSink);
//	                             with --journal FILE --resume, FILE holds
//	                             the earlier executions' lines and is only
//	                             read; without --journal it starts a new
//	                             run (of --run-id's id)
//	--run-id ID                  the run's id, from which its idempotency
//	                             keys derive, for a run without a journal
//	                             file (default: a new one)
//	--overwrite                  with --journal: start a new run in FILE
//	                             even if it holds one (its record is lost)
//	--resume                     continue the journal's crashed or
//	                             suspended run
//	--payload JSON               with --resume: the payload the suspended
//	                             step resumes with
//	--source NAME                where the payload comes from: WEBHOOK
//	                             (the default, nano-vm's), OPERATOR or
//	                             TIMER
//	--replay                     serve every effect from the journal
//	--result FILE                write the result JSON there (default:
//	                             standard output)
//	--repeat N                   run N times in this process; the last
//	                             run's result is written
//	--narrate                    narrate the run on standard error as it
//	                             goes (Narrator)
//	--state FILE                 keep the persistent state (state.get and
//	                             state.put, VVM's agent memory) in the
//	                             SQLite database FILE, across runs
//	                             (SQLiteStore); default: memory
//	--trigger KIND               input field "trigger": the trigger to run
//	                             (Grimoire: manual, hourly, daily, cron,
//	                             condition, event)
//	--event NAME                 input field "event": the event that fired
//	--event-payload JSON         input field "event_payload": its payload
//	--param KEY=VALUE            input field "params": an object of
//	                             parameter overrides, repeatable (VALUE as
//	                             for --input)
//	--mode simulate|cast         input field "mode"
//	--yes                        input field "yes": true, side effects are
//	                             confirmed in advance
//	--real-clock                 run on the real clock (Config.RealTime):
//	                             waits and retry backoffs really wait,
//	                             bounded by --max-wall; by default the
//	                             clock is virtual and they only advance it
//	--max-steps N                the run's limits (Limits), DefaultLimits
//	--max-tokens N               unless given, 0 for none: steps, LLM
//	--max-cost USD               tokens, cost, real time, live heap (also
//	--max-wall DURATION          bounding a value to a quarter of it),
//	--max-memory SIZE            trace bytes; a run that reaches one ends
//	--max-trace SIZE             budget_exceeded, kind limit.NAME
//	--otel URL                   export the runs' traces as OpenTelemetry
//	                             spans to the OTLP/HTTP endpoint URL (a
//	                             base URL: /v1/traces is appended); without
//	                             it, OTEL_EXPORTER_OTLP_TRACES_ENDPOINT or
//	                             OTEL_EXPORTER_OTLP_ENDPOINT turn the
//	                             export on (OTelConfigFromEnv)
//	--otel-timeout DURATION      how long the command waits at its end for
//	                             the spans to be sent (DefaultOTelTimeout)
//
// The run-selection flags only add fields to the run's input, after the
// --input ones; the program decides what they mean (docs/runtime.md).
//
// args are the arguments after the command name; program is the program's
// identity (journals check it) and run runs it once. The exit status is 0
// when the run succeeded, 3 when it is suspended, 128 plus the signal's
// number when SIGINT (130) or SIGTERM (143) cancelled it, 1 for any other
// status or an error, and 2 for a usage error (a journal that holds a run
// without --resume, --replay or --overwrite included).
//
// The first SIGINT or SIGTERM cancels the run: the call in flight is
// aborted (a tool's process group killed), nothing more starts, the
// journal gets its end line, and the result, status "cancelled", is
// written as usual; --resume continues the run.
func Main(args []string, program string, run func(*Host, RunOptions) *Result) int {
	return mainIO(args, program, nil, run, os.Stdout, os.Stderr)
}

// MainWith is Main for a host of compiled agent programs other than the
// generated Go (forge exec, which runs them on the Forge Machine): flags,
// when not nil, adds the host's own flags to Main's (their values are set
// when run is called), and the command writes to stdout and stderr.
func MainWith(args []string, program string, flags func(*flag.FlagSet), run func(*Host, RunOptions) *Result, stdout, stderr io.Writer) int {
	return mainIO(args, program, flags, run, stdout, stderr)
}

// stringsFlag collects a repeated string flag in order.
type stringsFlag []string

func (f *stringsFlag) String() string { return strings.Join(*f, " ") }

func (f *stringsFlag) Set(s string) error {
	*f = append(*f, s)
	return nil
}

// inputFlags collects repeated --input flags in order.
type inputFlags []Field

func (f *inputFlags) String() string { return "" }

func (f *inputFlags) Set(s string) error {
	k, v, ok := strings.Cut(s, "=")
	if !ok || k == "" {
		return errors.New("want KEY=VALUE")
	}
	val, err := ParseJSON([]byte(v))
	if err != nil {
		val = String(v)
	}
	*f = append(*f, Field{k, val})
	return nil
}

func mainIO(args []string, program string, flags func(*flag.FlagSet), run func(*Host, RunOptions) *Result, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet(program, flag.ContinueOnError)
	fs.SetOutput(stderr)
	if flags != nil {
		flags(fs)
	}
	var (
		inputs                       inputFlags
		llm, trace, journal, res     string
		tools                        stringsFlag
		models, model                string
		state                        string
		payload, source              string
		resume, replay, narrate      bool
		overwrite                    bool
		repeat                       int
		params                       inputFlags
		trigger, event, eventPayload string
		mode                         string
		yes                          bool
		realClock                    bool
		otelURL                      string
		otelTimeout                  time.Duration
		journalFD, runID             string
	)
	fs.StringVar(&llm, "llm", "", "the LLM provider: mock:FILE or openai:URL")
	fs.StringVar(&models, "models", "", "the model alias `FILE` (JSON; default $GENESIS_MODELS)")
	fs.StringVar(&model, "model", "", "every LLM call uses the provider model `NAME`")
	fs.Var(&tools, "tools", "a tool provider, repeatable: mock:FILE, exec:CMD, mcp:COMMAND ARGS… or mcp+http(s)://HOST:PORT/PATH")
	fs.Var(&inputs, "input", "an input field KEY=VALUE (repeatable; VALUE is JSON or a string)")
	fs.StringVar(&trace, "trace", "", "write the JSON Lines trace to `FILE`")
	fs.StringVar(&journal, "journal", "", "the effect journal `FILE`")
	fs.BoolVar(&resume, "resume", false, "continue the journal's crashed or suspended run")
	fs.StringVar(&journalFD, "journal-fd", "", "child protocol: write the journal's new lines to descriptor `W,R`'s W, each acknowledged on R (with --journal FILE --resume, FILE holds the earlier lines and is not written)")
	fs.StringVar(&runID, "run-id", "", "the run's `ID` (idempotency keys derive from it) for a run without a journal file")
	fs.StringVar(&payload, "payload", "", "with --resume: the `JSON` payload the suspended step resumes with")
	fs.StringVar(&source, "source", "WEBHOOK", "with --payload: where the payload comes from (WEBHOOK, the default, OPERATOR, TIMER)")
	fs.BoolVar(&replay, "replay", false, "serve every effect from the journal")
	fs.BoolVar(&overwrite, "overwrite", false, "with --journal: start a new run even if the journal holds one (its record is lost)")
	fs.StringVar(&res, "result", "", "write the result JSON to `FILE` (default: standard output)")
	fs.IntVar(&repeat, "repeat", 1, "run `N` times in this process and write the last result")
	fs.BoolVar(&narrate, "narrate", false, "narrate the run on standard error as it goes")
	fs.StringVar(&state, "state", "", "keep the persistent state in the SQLite database `FILE`, across runs")
	fs.StringVar(&trigger, "trigger", "", "the trigger `KIND` to run (input field trigger)")
	fs.StringVar(&event, "event", "", "the event `NAME` that fired (input field event)")
	fs.StringVar(&eventPayload, "event-payload", "", "the event's payload `JSON` (input field event_payload)")
	fs.Var(&params, "param", "a parameter override `KEY=VALUE` (repeatable; input field params)")
	fs.StringVar(&mode, "mode", "", "simulate or cast (input field mode)")
	fs.BoolVar(&yes, "yes", false, "confirm every side effect in advance (input field yes)")
	fs.BoolVar(&realClock, "real-clock", false, "run on the real clock: waits and backoffs really wait (bounded by --max-wall)")
	fs.StringVar(&otelURL, "otel", "", "export OpenTelemetry spans to the OTLP/HTTP endpoint `URL` (default: $OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, $OTEL_EXPORTER_OTLP_ENDPOINT)")
	fs.DurationVar(&otelTimeout, "otel-timeout", DefaultOTelTimeout, "wait at most `DURATION` at the end for the OpenTelemetry spans to be sent")
	limits := addLimitFlags(fs)
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if err := limits.check(); err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", program, err)
		return 2
	}
	if trigger != "" {
		inputs = append(inputs, Field{"trigger", String(trigger)})
	}
	if event != "" {
		inputs = append(inputs, Field{"event", String(event)})
	}
	if eventPayload != "" {
		v, err := ParseJSON([]byte(eventPayload))
		if err != nil {
			fmt.Fprintf(stderr, "%s: --event-payload: %v\n", program, err)
			return 2
		}
		inputs = append(inputs, Field{"event_payload", v})
	}
	if len(params) > 0 {
		inputs = append(inputs, Field{"params", Object(params...)})
	}
	if mode != "" {
		if mode != "simulate" && mode != "cast" {
			fmt.Fprintf(stderr, "%s: --mode must be simulate or cast\n", program)
			return 2
		}
		inputs = append(inputs, Field{"mode", String(mode)})
	}
	if yes {
		inputs = append(inputs, Field{"yes", True})
	}
	usage := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "%s: %s\n", program, fmt.Sprintf(format, a...))
		return 2
	}
	switch {
	case fs.NArg() > 0:
		return usage("unexpected argument %q", fs.Arg(0))
	case repeat < 1:
		return usage("--repeat must be at least 1")
	case resume && replay:
		return usage("--resume and --replay exclude each other")
	case (resume || replay) && journal == "":
		return usage("--resume and --replay need --journal")
	case payload != "" && !resume:
		return usage("--payload needs --resume")
	case overwrite && (journal == "" || resume || replay):
		return usage("--overwrite starts a new run in --journal FILE: it needs --journal and excludes --resume and --replay")
	case repeat > 1 && journal != "":
		return usage("--repeat cannot be used with --journal: each run would need its own")
	case otelTimeout <= 0:
		return usage("--otel-timeout must be positive")
	case journalFD != "" && (replay || overwrite || repeat > 1):
		return usage("--journal-fd excludes --replay, --overwrite and --repeat")
	case journalFD != "" && journal != "" && !resume:
		return usage("--journal-fd with --journal FILE needs --resume: FILE holds the earlier executions' lines")
	case runID != "" && journal != "":
		return usage("--run-id names a run without a journal file: a journal holds its run's id")
	case runID != "" && repeat > 1:
		return usage("--run-id cannot be used with --repeat: each run needs its own id")
	}
	otelCfg, otelOn, err := OTelConfigFromEnv(otelURL)
	if err != nil {
		return usage("%v", err)
	}
	fail := func(err error) int {
		fmt.Fprintf(stderr, "%s: %v\n", program, err)
		return 1
	}

	limits.apply()
	h, closeHost, err := HostFromFlags(HostFlags{LLM: llm, Models: models, Model: model, Tools: tools,
		State: state, RealClock: realClock, Limits: limits.l})
	if err != nil {
		if IsUsage(err) {
			return usage("%v", err)
		}
		return fail(err)
	}
	// MCP servers end with the command (and, killed, with its process:
	// their process group and Pdeathsig, as exec: tools).
	defer closeHost()
	opts := RunOptions{Program: program, Input: Object(inputs...), RunID: runID}
	if payload != "" {
		v, err := ParseJSON([]byte(payload))
		if err != nil {
			return usage("--payload: %v", err)
		}
		switch source {
		case "WEBHOOK", "OPERATOR", "TIMER":
		default:
			// nano-vm's WebhookEvent refuses any other source too.
			return usage("--source: want WEBHOOK, OPERATOR or TIMER, not %q", source)
		}
		opts.Resume = &Resumption{Payload: v, Source: source}
	}
	if journalFD != "" {
		w, r, err := parseJournalFD(journalFD)
		if err != nil {
			return usage("--journal-fd: %v", err)
		}
		defer w.Close()
		defer r.Close()
		sink := NewStreamSink(w, r)
		var j *Journal
		if journal != "" {
			text, err := os.ReadFile(journal)
			if err != nil {
				return fail(err)
			}
			if j, err = ResumeSinkJournal(text, sink); err != nil {
				return fail(fmt.Errorf("%s: %v", journal, err))
			}
			opts.Mode = JournalResume
		} else if j, err = NewSinkJournal(program, runID, sink); err != nil {
			return fail(fmt.Errorf("the journal stream: %v", err))
		}
		opts.Journal = j
	} else if journal != "" {
		var j *Journal
		var err error
		switch {
		case resume:
			j, err = OpenJournal(journal)
			opts.Mode = JournalResume
		case replay:
			j, err = OpenJournal(journal)
			opts.Mode = JournalReplay
		case overwrite:
			j, err = OverwriteJournal(journal, program)
		default:
			j, err = CreateJournal(journal, program)
		}
		if errors.Is(err, ErrJournalExists) {
			return usage("%v: continue that run with --resume, replay it with --replay, or start over with --overwrite (its record is lost, and a new run repeats every side effect)", err)
		}
		if err != nil {
			return fail(err)
		}
		defer j.Close()
		opts.Journal = j
	}
	var traceBuf *bufio.Writer
	if trace != "" {
		f, err := os.Create(trace)
		if err != nil {
			return fail(err)
		}
		traceBuf = bufio.NewWriter(f)
		defer func() { traceBuf.Flush(); f.Close() }()
		opts.Trace = traceBuf
	}
	if narrate {
		if opts.Trace != nil {
			opts.Trace = io.MultiWriter(opts.Trace, NewNarrator(stderr))
		} else {
			opts.Trace = NewNarrator(stderr)
		}
	}

	var ot *OTel
	if otelOn {
		otelCfg.Timeout, otelCfg.Warn = otelTimeout, stderr
		// The export never fails the command: without an exporter the
		// runs go on untraced.
		if ot, err = NewOTel(otelCfg); err != nil {
			fmt.Fprintf(stderr, "warning: %v; no spans are exported\n", err)
		} else {
			defer ot.Close()
		}
	}

	ctx, received, stopSignals := signalContext(context.Background())
	defer stopSignals()
	opts.Context = ctx
	var result *Result
	for i := 0; i < repeat && (i == 0 || ctx.Err() == nil); i++ {
		o := opts
		if ot != nil {
			// The spans' ids derive from the run id: the journal's, so
			// that a replay exports the spans its run did; else a new
			// one, which the run's idempotency keys share.
			id := ""
			if o.Journal != nil {
				id = o.Journal.RunID()
			}
			if id == "" {
				id = NewRunID()
				o.RunID = id
			}
			w := ot.Run(id)
			if o.Trace != nil {
				o.Trace = io.MultiWriter(o.Trace, w)
			} else {
				o.Trace = w
			}
		}
		result = run(h, o)
	}
	if ot != nil {
		ot.Close()
	}
	if traceBuf != nil {
		if err := traceBuf.Flush(); err != nil {
			return fail(err)
		}
	}
	out := append(result.AppendJSON(nil), '\n')
	if result.Error != nil && result.Error.Kind == "config" {
		// A run the host was not configured for (no LLM provider, no
		// model) says so on standard error too, not only in the result.
		fmt.Fprintf(stderr, "%s: %v\n", program, result.Error)
	}
	if res != "" {
		if err := os.WriteFile(res, out, 0o644); err != nil {
			return fail(err)
		}
	} else {
		stdout.Write(out)
	}
	switch result.Status {
	case StatusSuccess:
		return 0
	case StatusSuspended:
		return 3
	case StatusCancelled:
		if s := received(); s != nil {
			return signalExit(s)
		}
	}
	return 1
}
