package runtime

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// ModelTable maps the model names programs use ("sonnet", "haiku",
// "gpt-4o", "anthropic:haiku", …) to the model identifiers a provider
// knows, and gives each model's price for providers that do not report
// the cost of a call. Resolve applies, first match winning:
//
//  1. Force (--model NAME): every call, whatever its program names;
//  2. a call naming no model: Default (GENESIS_LLM_MODEL, else the
//     models file's "default"), else it fails with kind "config";
//  3. the environment: GENESIS_MODEL_<NAME>, NAME upper-cased with every
//     character other than a letter or digit replaced by "_"
//     (GENESIS_MODEL_SONNET, GENESIS_MODEL_GPT_4O);
//  4. the models file (--models FILE, else $GENESIS_MODELS);
//  5. the built-in table (BuiltinModels);
//  6. a name "PROVIDER:NAME" (Grimoire's "anthropic:haiku") is looked up
//     again as NAME by 3 to 5;
//  7. the name unchanged: a provider's own identifier ("gpt-4o-mini",
//     "anthropic/claude-sonnet-4.5") passes through.
//
// docs/runtime.md, Model names, has the table and the file's format.
type ModelTable struct {
	Force   string // every call's model, when not empty
	Default string // the model of a call that names none
	file    map[string]ModelEntry
	env     map[string]string // normalized name → model
	// price is GENESIS_LLM_PRICE, which applies to every model the file
	// gives no price.
	price *[2]float64
}

// ModelEntry is one model: its identifier at the provider and, when
// HasPrice, its price in USD per million prompt and completion tokens.
type ModelEntry struct {
	Model                        string
	PromptPrice, CompletionPrice float64
	HasPrice                     bool
}

// builtinModels are the names the corpus programs use and the usual
// OpenAI ones, with the providers' published list prices (USD per
// million prompt and completion tokens) when this table was written:
// Anthropic's identifiers as its OpenAI-compatible endpoint
// (https://api.anthropic.com/v1) takes them. A models file or the
// environment points them elsewhere (OpenRouter: "anthropic/…").
var builtinModels = []struct {
	name  string
	entry ModelEntry
}{
	{"gpt-4.1", ModelEntry{"gpt-4.1", 2, 8, true}},
	{"gpt-4.1-mini", ModelEntry{"gpt-4.1-mini", 0.4, 1.6, true}},
	{"gpt-4o", ModelEntry{"gpt-4o", 2.5, 10, true}},
	{"gpt-4o-mini", ModelEntry{"gpt-4o-mini", 0.15, 0.6, true}},
	{"haiku", ModelEntry{"claude-haiku-4-5", 1, 5, true}},
	{"opus", ModelEntry{"claude-opus-4-1", 15, 75, true}},
	{"sonnet", ModelEntry{"claude-sonnet-4-5", 3, 15, true}},
}

// BuiltinModels returns the built-in table, sorted by name.
func BuiltinModels() map[string]ModelEntry {
	m := make(map[string]ModelEntry, len(builtinModels))
	for _, b := range builtinModels {
		m[b.name] = b.entry
	}
	return m
}

// builtinPrice returns the built-in price of a provider model identifier.
func builtinPrice(model string) (ModelEntry, bool) {
	for _, b := range builtinModels {
		if b.entry.Model == model {
			return b.entry, true
		}
	}
	return ModelEntry{}, false
}

// envModelPrefix starts the environment variables that name a model.
const envModelPrefix = "GENESIS_MODEL_"

// envModelName is the environment variable of a model name.
func envModelName(name string) string {
	var b strings.Builder
	b.WriteString(envModelPrefix)
	for _, r := range strings.ToUpper(name) {
		if r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	return b.String()
}

// LoadModelTable builds the table from the process's environment
// (GENESIS_MODEL_*, GENESIS_LLM_MODEL, GENESIS_LLM_PRICE), the models
// file path (when empty, $GENESIS_MODELS; when both are empty, no file)
// and force (--model). A file that cannot be read or does not parse is
// an error, and so is a malformed GENESIS_LLM_PRICE.
func LoadModelTable(path, force string) (*ModelTable, error) {
	t := &ModelTable{Force: force, env: map[string]string{}}
	for _, kv := range os.Environ() {
		k, v, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(k, envModelPrefix) && v != "" {
			t.env[k] = v
		}
	}
	if p := os.Getenv("GENESIS_LLM_PRICE"); p != "" {
		in, out, _ := strings.Cut(p, ",")
		a, err1 := strconv.ParseFloat(strings.TrimSpace(in), 64)
		b, err2 := strconv.ParseFloat(strings.TrimSpace(out), 64)
		if err1 != nil || err2 != nil || a < 0 || b < 0 {
			return nil, errors.New("GENESIS_LLM_PRICE: expected two numbers, USD per million prompt and completion tokens: " + strconv.Quote(p))
		}
		t.price = &[2]float64{a, b}
	}
	if path == "" {
		path = os.Getenv("GENESIS_MODELS")
	}
	if path != "" {
		data, err := os.ReadFile(path)
		if err != nil {
			return nil, fmt.Errorf("models file: %v", err)
		}
		if err := t.parseFile(data); err != nil {
			return nil, fmt.Errorf("models file %s: %v", path, err)
		}
	}
	if d := os.Getenv("GENESIS_LLM_MODEL"); d != "" {
		t.Default = d
	}
	return t, nil
}

// parseFile reads a models file:
//
//	{"default": "gpt-4o-mini",
//	 "models": {"sonnet": "anthropic/claude-sonnet-4.5",
//	            "opus": {"model": "anthropic/claude-opus-4.1", "price": [15, 75]}}}
func (t *ModelTable) parseFile(data []byte) error {
	v, err := ParseJSON(data)
	if err != nil {
		return err
	}
	if v.k != KindObject {
		return errors.New("expected a JSON object")
	}
	for _, k := range v.Keys() {
		switch k {
		case "default":
			s, ok := ObjGet(v, String(k)).AsString()
			if !ok || s == "" {
				return errors.New(`"default" must be a model name`)
			}
			t.Default = s
		case "models":
			ms := ObjGet(v, String(k))
			if ms.k != KindObject {
				return errors.New(`"models" must be an object of model names`)
			}
			t.file = map[string]ModelEntry{}
			for _, name := range ms.Keys() {
				e, err := parseModelEntry(ObjGet(ms, String(name)))
				if err != nil {
					return fmt.Errorf("models.%s: %v", name, err)
				}
				t.file[name] = e
			}
		default:
			return fmt.Errorf("unexpected key %q (want default, models)", k)
		}
	}
	return nil
}

func parseModelEntry(v Value) (ModelEntry, error) {
	if s, ok := v.AsString(); ok {
		if s == "" {
			return ModelEntry{}, errors.New("an empty model")
		}
		return ModelEntry{Model: s}, nil
	}
	if v.k != KindObject {
		return ModelEntry{}, errors.New(`expected a model identifier or {"model": …, "price": [prompt, completion]}`)
	}
	var e ModelEntry
	for _, k := range v.Keys() {
		f := ObjGet(v, String(k))
		switch k {
		case "model":
			s, ok := f.AsString()
			if !ok || s == "" {
				return e, errors.New(`"model" must be a model identifier`)
			}
			e.Model = s
		case "price":
			ps := f.Elems()
			if f.k != KindList || len(ps) != 2 {
				return e, errors.New(`"price" must be [prompt, completion], USD per million tokens`)
			}
			a, ok1 := ps[0].AsNumber()
			b, ok2 := ps[1].AsNumber()
			if !ok1 || !ok2 || a < 0 || b < 0 {
				return e, errors.New(`"price" must be two numbers ≥ 0`)
			}
			e.PromptPrice, e.CompletionPrice, e.HasPrice = a, b, true
		default:
			return e, fmt.Errorf("unexpected key %q (want model, price)", k)
		}
	}
	if e.Model == "" {
		return e, errors.New(`"model" is missing`)
	}
	return e, nil
}

// Resolve returns the provider model of a call whose program names the
// model name ("" for none) and its price, by the rules of ModelTable.
// ok is false when the call names no model and there is no default.
func (t *ModelTable) Resolve(name string) (e ModelEntry, ok bool) {
	switch {
	case t.Force != "":
		e = ModelEntry{Model: t.Force}
	case name == "":
		if t.Default == "" {
			return ModelEntry{}, false
		}
		e = ModelEntry{Model: t.Default}
	default:
		var found bool
		if e, found = t.lookup(name); !found {
			if _, rest, cut := strings.Cut(name, ":"); cut && rest != "" {
				e, found = t.lookup(rest)
			}
		}
		if !found {
			e = ModelEntry{Model: name}
		}
	}
	if !e.HasPrice {
		if t.price != nil {
			e.PromptPrice, e.CompletionPrice, e.HasPrice = t.price[0], t.price[1], true
		} else if b, ok := builtinPrice(e.Model); ok {
			e.PromptPrice, e.CompletionPrice, e.HasPrice = b.PromptPrice, b.CompletionPrice, true
		}
	}
	return e, true
}

// lookup is steps 3 to 5 of the rules for one name.
func (t *ModelTable) lookup(name string) (ModelEntry, bool) {
	if m, ok := t.env[envModelName(name)]; ok {
		return ModelEntry{Model: m}, true
	}
	if e, ok := t.file[name]; ok {
		return e, true
	}
	for _, b := range builtinModels {
		if b.name == name {
			return b.entry, true
		}
	}
	return ModelEntry{}, false
}
