// Package otlptest is an OTLP/HTTP trace receiver for tests: an
// httptest server that decodes each ExportTraceServiceRequest
// (http/protobuf or http/json) with the OTLP protocol's own types and
// keeps the spans, and a rendering of them as a tree that tests compare.
package otlptest

import (
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"

	coltrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
)

// Span is a received span, its ids in hex and its attributes rendered
// as strings (AttrString).
type Span struct {
	TraceID, SpanID, ParentID string
	Name                      string
	Kind                      string // SPAN_KIND_INTERNAL, …
	Start, End                uint64 // Unix nanoseconds
	Attrs                     map[string]string
	Events                    []Event
	Status                    string // STATUS_CODE_UNSET, STATUS_CODE_ERROR, …
	StatusMessage             string
	Resource                  map[string]string
	Scope                     string
}

// Event is a span's event.
type Event struct {
	Name  string
	Time  uint64
	Attrs map[string]string
}

// Receiver is an OTLP/HTTP trace receiver on a local port.
type Receiver struct {
	srv      *httptest.Server
	mu       sync.Mutex
	spans    []Span
	requests int
	types    []string // the Content-Types received
	headers  []http.Header
}

// Start starts a receiver that stops when the test ends. It answers
// /v1/traces; any other path is a 404.
func Start(t testing.TB) *Receiver {
	r := &Receiver{}
	r.srv = httptest.NewServer(http.HandlerFunc(r.serve))
	t.Cleanup(r.srv.Close)
	return r
}

// Close stops the receiver: later exports to it fail.
func (r *Receiver) Close() { r.srv.Close() }

// URL is the receiver's base URL (OTEL_EXPORTER_OTLP_ENDPOINT's kind).
func (r *Receiver) URL() string { return r.srv.URL }

func (r *Receiver) serve(w http.ResponseWriter, req *http.Request) {
	if req.URL.Path != "/v1/traces" || req.Method != http.MethodPost {
		http.NotFound(w, req)
		return
	}
	body, err := io.ReadAll(req.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	var msg coltrace.ExportTraceServiceRequest
	ct := req.Header.Get("Content-Type")
	switch ct {
	case "application/x-protobuf":
		err = proto.Unmarshal(body, &msg)
	case "application/json":
		err = protojson.Unmarshal(body, &msg)
	default:
		err = fmt.Errorf("unexpected Content-Type %q", ct)
	}
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	r.mu.Lock()
	r.requests++
	r.types = append(r.types, ct)
	r.headers = append(r.headers, req.Header.Clone())
	for _, rs := range msg.GetResourceSpans() {
		res := attrs(rs.GetResource().GetAttributes())
		for _, ss := range rs.GetScopeSpans() {
			for _, s := range ss.GetSpans() {
				sp := Span{
					TraceID:  hex.EncodeToString(s.GetTraceId()),
					SpanID:   hex.EncodeToString(s.GetSpanId()),
					ParentID: hex.EncodeToString(s.GetParentSpanId()),
					Name:     s.GetName(),
					Kind:     s.GetKind().String(),
					Start:    s.GetStartTimeUnixNano(),
					End:      s.GetEndTimeUnixNano(),
					Attrs:    attrs(s.GetAttributes()),
					Status:   s.GetStatus().GetCode().String(),
					Resource: res,
					Scope:    ss.GetScope().GetName(),
				}
				sp.StatusMessage = s.GetStatus().GetMessage()
				for _, e := range s.GetEvents() {
					sp.Events = append(sp.Events, Event{Name: e.GetName(), Time: e.GetTimeUnixNano(), Attrs: attrs(e.GetAttributes())})
				}
				r.spans = append(r.spans, sp)
			}
		}
	}
	r.mu.Unlock()
	w.Header().Set("Content-Type", ct)
	var reply []byte
	if ct == "application/json" {
		reply, _ = protojson.Marshal(&coltrace.ExportTraceServiceResponse{})
	} else {
		reply, _ = proto.Marshal(&coltrace.ExportTraceServiceResponse{})
	}
	w.Write(reply)
}

// Spans returns the spans received so far, in the order they came.
func (r *Receiver) Spans() []Span {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Span(nil), r.spans...)
}

// ContentTypes returns the Content-Type of each request received.
func (r *Receiver) ContentTypes() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.types...)
}

// Headers returns the headers of each request received.
func (r *Receiver) Headers() []http.Header {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]http.Header(nil), r.headers...)
}

// Reset forgets the spans received.
func (r *Receiver) Reset() {
	r.mu.Lock()
	r.spans, r.types, r.headers, r.requests = nil, nil, nil, 0
	r.mu.Unlock()
}

func attrs(kvs []*commonpb.KeyValue) map[string]string {
	m := make(map[string]string, len(kvs))
	for _, kv := range kvs {
		m[kv.GetKey()] = AttrString(kv.GetValue())
	}
	return m
}

// AttrString renders an attribute value: a string as is, a number or a
// bool in Go's formatting.
func AttrString(v *commonpb.AnyValue) string {
	switch x := v.GetValue().(type) {
	case *commonpb.AnyValue_StringValue:
		return x.StringValue
	case *commonpb.AnyValue_IntValue:
		return strconv.FormatInt(x.IntValue, 10)
	case *commonpb.AnyValue_DoubleValue:
		return strconv.FormatFloat(x.DoubleValue, 'g', -1, 64)
	case *commonpb.AnyValue_BoolValue:
		return strconv.FormatBool(x.BoolValue)
	}
	return v.String()
}

// Tree renders spans as an indented tree: each span's name, kind and
// status, then its attributes whose keys keep says to keep (all when keep
// is nil), sorted by key, then its events with their attributes; a span's
// children follow, in order of start time (then in the order they came),
// indented by two.
// Times are milliseconds since the earliest start, so two exports of one
// run at different wall times render alike. Spans whose parent is not
// among spans are roots.
func Tree(spans []Span, keep func(key string) bool) string {
	var base uint64
	for i, s := range spans {
		if i == 0 || s.Start < base {
			base = s.Start
		}
	}
	ids := map[string]bool{}
	for _, s := range spans {
		ids[s.SpanID] = true
	}
	kids := map[string][]Span{}
	var roots []Span
	for _, s := range spans {
		if s.ParentID == "" || !ids[s.ParentID] {
			roots = append(roots, s)
		} else {
			kids[s.ParentID] = append(kids[s.ParentID], s)
		}
	}
	order := func(ss []Span) {
		sort.SliceStable(ss, func(i, j int) bool { return ss[i].Start < ss[j].Start })
	}
	ms := func(t uint64) string {
		return strconv.FormatFloat(float64(t-base)/1e6, 'f', -1, 64)
	}
	var b strings.Builder
	var walk func(s Span, depth int)
	walk = func(s Span, depth int) {
		pad := strings.Repeat("  ", depth)
		fmt.Fprintf(&b, "%s%s [%s %s..%s %s", pad, s.Name, strings.TrimPrefix(s.Kind, "SPAN_KIND_"), ms(s.Start), ms(s.End), strings.TrimPrefix(s.Status, "STATUS_CODE_"))
		if s.StatusMessage != "" {
			fmt.Fprintf(&b, " %q", s.StatusMessage)
		}
		b.WriteString("]\n")
		writeAttrs(&b, pad+"    ", s.Attrs, keep)
		for _, e := range s.Events {
			fmt.Fprintf(&b, "%s  event %s @%s\n", pad, e.Name, ms(e.Time))
			writeAttrs(&b, pad+"      ", e.Attrs, keep)
		}
		k := kids[s.SpanID]
		order(k)
		for _, c := range k {
			walk(c, depth+1)
		}
	}
	order(roots)
	for _, r := range roots {
		walk(r, 0)
	}
	return b.String()
}

func writeAttrs(b *strings.Builder, pad string, m map[string]string, keep func(string) bool) {
	keys := make([]string, 0, len(m))
	for k := range m {
		if keep == nil || keep(k) {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Fprintf(b, "%s%s=%s\n", pad, k, m[k])
	}
}
