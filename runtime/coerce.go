package runtime

import (
	"math"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"
)

// An llm call's option "output_schema" (Grimoire's advise output) is a
// JSON schema the reply is coerced to rather than checked against: the
// Grimoire VM specification says "If the output does not match the
// schema, the VM MUST coerce it to a valid value", and its fallback is
// for replies nothing makes valid. The schema reaches the model as
// structured output when the provider has it (StructuredOutput), else in
// the prompt (schemaInstruction).

// StructuredOutput is implemented by LLM providers that send an
// "output_schema" to the model themselves (OpenAI's response_format);
// for any other provider the run appends the schema to the prompt.
type StructuredOutput interface {
	StructuredOutput() bool
}

// schemaInstruction is what the run appends to the prompt of a call with
// an output schema when the provider takes no schema of its own.
func schemaInstruction(schema Value) string {
	return "\n\nAnswer with JSON only, a value matching this JSON schema: " + string(AppendJSON(nil, schema))
}

// structuredSchema is the schema a provider sends as structured output
// for an output schema: an object schema as it is, any other wrapped as
// the property "value" of an object (structured output wants an object
// at the top); coerceOutput unwraps such a reply.
func structuredSchema(schema Value) Value {
	if t, _ := schema.Get("type"); t.Str() == "object" {
		return schema
	}
	return Object(
		Field{"type", String("object")},
		Field{"properties", Object(Field{"value", schema})},
		Field{"required", List(String("value"))},
		Field{"additionalProperties", False},
	)
}

// coerceOutput coerces a model's reply to schema: text is trimmed, a
// Markdown code fence (```json … ```) unwrapped and parsed as JSON when
// it is JSON (and the schema wants no string); a {"value": x} reply to a
// non-object schema is x (structuredSchema); then, by the schema:
//
//	enum     the value itself, or a string equal to one of the values but
//	         for case and surrounding white space or quotes
//	boolean  a bool; true/yes or false/no as text (any case); 1 or 0
//	number   a number or numeric text, clamped to minimum and maximum
//	string   the text (a non-string rendered as JSON), cut to maxLength;
//	         shorter than minLength or not matching pattern: no value
//	object   every property coerced from the reply's field of that name
//	         (missing: no value); other fields dropped
//	array    every item coerced
//
// It returns the value, which the schema accepts, or "" and what is
// wrong (the caller then fails the call, and the spell uses its fallback).
func coerceOutput(v, schema Value) (Value, string) {
	if v.k == KindString {
		text := unfence(strings.TrimSpace(v.s))
		v = String(text)
		if t, _ := schema.Get("type"); t.Str() != "string" {
			if p, err := ParseJSON([]byte(text)); err == nil {
				v = p
			}
		} else if strings.HasPrefix(text, `"`) {
			if p, err := ParseJSON([]byte(text)); err == nil && p.k == KindString {
				v = p
			}
		}
	}
	if t, _ := schema.Get("type"); t.Str() != "object" && v.k == KindObject && v.Len() == 1 {
		if x, ok := v.Get("value"); ok {
			v = x
		}
	}
	c, msg := coerceTo(v, schema, "")
	if msg != "" {
		return Value{}, msg
	}
	if msg := validateSchema(c, schema, ""); msg != "" {
		return Value{}, msg // a schema this coercion does not know
	}
	return c, ""
}

// unfence returns the text inside a Markdown code fence, or text.
func unfence(text string) string {
	if !strings.HasPrefix(text, "```") {
		return text
	}
	body := text[3:]
	if nl := strings.IndexByte(body, '\n'); nl >= 0 {
		body = body[nl+1:] // the info string: json, JSON, …
	} else {
		body = strings.TrimLeft(body, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")
	}
	if end := strings.LastIndex(body, "```"); end >= 0 {
		body = body[:end]
	}
	return strings.TrimSpace(body)
}

func coerceTo(v, schema Value, path string) (Value, string) {
	if e, ok := schema.Get("enum"); ok && e.k == KindList {
		if ValueContains(e, v) {
			return v, ""
		}
		if v.k == KindString {
			s := strings.Trim(strings.TrimSpace(v.s), `"'.`)
			for _, x := range e.Elems() {
				if x.k == KindString && strings.EqualFold(x.s, s) {
					return x, ""
				}
			}
		}
		return Value{}, at(path) + v.String() + " is not one of " + e.String()
	}
	t, _ := schema.Get("type")
	switch t.Str() {
	case "boolean":
		switch v.k {
		case KindBool:
			return v, ""
		case KindNumber:
			if f := v.Num(); f == 0 || f == 1 {
				return Bool(f == 1), ""
			}
		case KindString:
			switch strings.ToLower(strings.Trim(strings.TrimSpace(v.s), `"'.`)) {
			case "true", "yes":
				return True, ""
			case "false", "no":
				return False, ""
			}
		}
		return Value{}, at(path) + v.String() + " is not a boolean"
	case "number", "integer":
		f, ok := v.AsNumber()
		if !ok && v.k == KindString {
			g, err := strconv.ParseFloat(strings.TrimSpace(v.s), 64)
			f, ok = g, err == nil
		}
		if !ok || math.IsNaN(f) || math.IsInf(f, 0) {
			return Value{}, at(path) + v.String() + " is not a number"
		}
		if t.Str() == "integer" {
			f = math.Round(f)
		}
		if n, ok := schema.Get("minimum"); ok && n.k == KindNumber && f < n.Num() {
			f = n.Num()
		}
		if n, ok := schema.Get("maximum"); ok && n.k == KindNumber && f > n.Num() {
			f = n.Num()
		}
		return Number(f), ""
	case "string":
		s := v.s
		switch v.k {
		case KindString:
		case KindUnit:
			return Value{}, at(path) + "no text"
		default:
			s = v.String()
		}
		if n, ok := schema.Get("maxLength"); ok && n.k == KindNumber && float64(utf8.RuneCountInString(s)) > n.Num() {
			s = string([]rune(s)[:max(0, int(n.Num()))])
		}
		if n, ok := schema.Get("minLength"); ok && n.k == KindNumber && float64(utf8.RuneCountInString(s)) < n.Num() {
			return Value{}, at(path) + strconv.Quote(s) + " is shorter than " + n.String()
		}
		if p, ok := schema.Get("pattern"); ok && p.k == KindString {
			re, err := regexp.Compile(p.s)
			if err != nil {
				return Value{}, at(path) + "the pattern " + strconv.Quote(p.s) + " is no regular expression: " + err.Error()
			}
			if !re.MatchString(s) {
				return Value{}, at(path) + strconv.Quote(s) + " does not match the pattern " + strconv.Quote(p.s)
			}
		}
		return String(s), ""
	case "object":
		if v.k != KindObject {
			return Value{}, at(path) + v.String() + " is not an object"
		}
		props, _ := schema.Get("properties")
		var fs []Field
		for _, k := range props.Keys() {
			x, ok := v.Get(k)
			if !ok {
				return Value{}, at(path) + "no field " + strconv.Quote(k)
			}
			ps, _ := props.Get(k)
			c, msg := coerceTo(x, ps, path+"."+k)
			if msg != "" {
				return Value{}, msg
			}
			fs = append(fs, Field{k, c})
		}
		return Object(fs...), ""
	case "array":
		if v.k != KindList {
			return Value{}, at(path) + v.String() + " is not a list"
		}
		items, ok := schema.Get("items")
		if !ok {
			return v, ""
		}
		out := make([]Value, 0, v.Len())
		for i, x := range v.Elems() {
			c, msg := coerceTo(x, items, path+"."+strconv.Itoa(i))
			if msg != "" {
				return Value{}, msg
			}
			out = append(out, c)
		}
		return List(out...), ""
	}
	return v, ""
}
