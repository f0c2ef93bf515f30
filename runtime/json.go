package runtime

import (
	"crypto/sha256"
	"encoding/hex"
	"math"
	"slices"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// JSON encoding of values. Compact, objects in their key order, strings
// escaped only where JSON requires it (", \ and control characters; no
// HTML escaping; invalid UTF-8 becomes U+FFFD), numbers in the shortest
// form that reads back to the same float64 (ECMAScript's Number
// toString: 1e21 and above and below 1e-6 with an exponent, -0 as 0),
// unit as null, non-finite numbers as null, and an error value as
// {"$error":{"kind":K,"message":M}}.

// AppendJSON appends the JSON encoding of v to b.
func AppendJSON(b []byte, v Value) []byte { return appendValue(b, v, false) }

// EncodeJSON returns the JSON encoding of v.
func EncodeJSON(v Value) []byte { return appendValue(nil, v, false) }

// AppendCanonical appends the canonical encoding of v to b: its JSON
// encoding with every object's keys sorted as RFC 8785 (JCS) sorts them,
// by UTF-16 code units. Two values that are value.eq (and hold no NaN)
// have the same canonical encoding, in every process.
func AppendCanonical(b []byte, v Value) []byte { return appendValue(b, v, true) }

// Canonical returns the canonical encoding of v.
func Canonical(v Value) []byte { return appendValue(nil, v, true) }

// Hash returns the hex sha256 of v's canonical encoding.
func Hash(v Value) string {
	sum := sha256.Sum256(Canonical(v))
	return hex.EncodeToString(sum[:])
}

func appendValue(b []byte, v Value, canon bool) []byte {
	e := jsonEncoder{canon: canon, max: -1}
	return e.value(b, v)
}

// jsonEncoder writes JSON, or the canonical encoding, stopping once the
// output is longer than max (when max ≥ 0): it then sets over and
// returns what it has. The bound makes the encoding of a value that
// holds one list many times over — small in memory, exponential in
// JSON — cost no more than the bound.
type jsonEncoder struct {
	canon bool
	max   int
	over  bool
}

func (e *jsonEncoder) full(b []byte) bool {
	if e.max >= 0 && len(b) > e.max {
		e.over = true
	}
	return e.over
}

func (e *jsonEncoder) value(b []byte, v Value) []byte {
	switch v.k {
	case KindUnit:
		return append(b, "null"...)
	case KindBool:
		if v.u != 0 {
			return append(b, "true"...)
		}
		return append(b, "false"...)
	case KindNumber:
		return appendNumber(b, math.Float64frombits(v.u))
	case KindString:
		if e.max >= 0 && len(b)+len(v.s) > e.max {
			e.over = true
			return b
		}
		return appendString(b, v.s)
	case KindList:
		b = append(b, '[')
		for i, x := range v.h.items[:v.u] {
			if e.full(b) {
				return b
			}
			if i > 0 {
				b = append(b, ',')
			}
			b = e.value(b, x)
		}
		return append(b, ']')
	case KindObject:
		n := int(v.u)
		b = append(b, '{')
		if e.canon && n > 1 {
			order := make([]int, n)
			for i := range order {
				order[i] = i
			}
			keys := v.h.keys
			slices.SortFunc(order, func(i, j int) int { return compareUTF16(keys[i], keys[j]) })
			for i, j := range order {
				if e.full(b) {
					return b
				}
				if i > 0 {
					b = append(b, ',')
				}
				b = appendString(b, keys[j])
				b = append(b, ':')
				b = e.value(b, v.h.items[j])
			}
			return append(b, '}')
		}
		for i := 0; i < n; i++ {
			if e.full(b) {
				return b
			}
			if i > 0 {
				b = append(b, ',')
			}
			b = appendString(b, v.h.keys[i])
			b = append(b, ':')
			b = e.value(b, v.h.items[i])
		}
		return append(b, '}')
	case KindError:
		b = append(b, `{"$error":{"kind":`...)
		b = appendString(b, v.s)
		b = append(b, `,"message":`...)
		b = appendString(b, v.h.msg)
		return append(b, "}}"...)
	}
	return append(b, "null"...)
}

// appendNumber appends f in ECMAScript's shortest round-trip form.
func appendNumber(b []byte, f float64) []byte {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return append(b, "null"...)
	}
	if f == 0 {
		return append(b, '0')
	}
	if f == math.Trunc(f) && math.Abs(f) < 1e15 {
		return strconv.AppendInt(b, int64(f), 10)
	}
	a := math.Abs(f)
	format := byte('f')
	if a < 1e-6 || a >= 1e21 {
		format = 'e'
	}
	b = strconv.AppendFloat(b, f, format, -1, 64)
	if format == 'e' {
		// e-07 → e-7, as ECMAScript writes it.
		n := len(b)
		if n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b
}

const hexDigits = "0123456789abcdef"

// appendString appends s as a JSON string.
func appendString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, "\uFFFD"...)
			i++
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// compareUTF16 orders strings by their UTF-16 code units (RFC 8785 §3.2.3).
func compareUTF16(a, b string) int {
	for a != "" && b != "" {
		ra, na := utf8.DecodeRuneInString(a)
		rb, nb := utf8.DecodeRuneInString(b)
		if ra != rb {
			ua, ub := ra, rb
			if ra >= 0x10000 && rb < 0x10000 {
				ua, _ = utf16.EncodeRune(ra)
			} else if rb >= 0x10000 && ra < 0x10000 {
				ub, _ = utf16.EncodeRune(rb)
			}
			if ua < ub {
				return -1
			}
			if ua > ub {
				return 1
			}
			// a supplementary rune whose high surrogate equals the other
			// (BMP) rune: impossible, a BMP rune is never a surrogate in
			// valid UTF-8; order by code point.
			if ra < rb {
				return -1
			}
			return 1
		}
		a, b = a[na:], b[nb:]
	}
	switch {
	case a == "" && b == "":
		return 0
	case a == "":
		return -1
	}
	return 1
}

// JSONError is a syntax error in JSON text, at a byte offset.
type JSONError struct {
	Offset int
	Msg    string
}

func (e *JSONError) Error() string {
	return "json: " + e.Msg + " at offset " + strconv.Itoa(e.Offset)
}

// maxDepth bounds the nesting of decoded JSON.
const maxDepth = 10000

// ParseJSON decodes one JSON value (RFC 8259, surrounding whitespace
// allowed): null is unit, objects keep their key order, and a key given
// twice keeps its first place and its last value. Invalid UTF-8 in
// strings becomes U+FFFD; numbers that overflow float64 are errors.
func ParseJSON(data []byte) (Value, error) { return parseJSON(data, false) }

// ParseJSONExt is ParseJSON where an object whose only key is "$error",
// with an object {"kind": K, "message": M} as its value, decodes to an
// error value: the inverse of AppendJSON for every value. Journals, tool
// replies and mock files use it.
func ParseJSONExt(data []byte) (Value, error) { return parseJSON(data, true) }

func parseJSON(data []byte, ext bool) (Value, error) {
	d := decoder{data: data, ext: ext}
	d.skip()
	v, err := d.value(0)
	if err != nil {
		return Value{}, err
	}
	d.skip()
	if d.pos < len(d.data) {
		return Value{}, d.errorf("unexpected data after the value")
	}
	return v, nil
}

type decoder struct {
	data []byte
	pos  int
	ext  bool
}

func (d *decoder) errorf(msg string) error { return &JSONError{Offset: d.pos, Msg: msg} }

func (d *decoder) skip() {
	for d.pos < len(d.data) {
		switch d.data[d.pos] {
		case ' ', '\t', '\n', '\r':
			d.pos++
		default:
			return
		}
	}
}

func (d *decoder) literal(word string, v Value) (Value, error) {
	if len(d.data)-d.pos >= len(word) && string(d.data[d.pos:d.pos+len(word)]) == word {
		d.pos += len(word)
		return v, nil
	}
	return Value{}, d.errorf("invalid literal")
}

func (d *decoder) value(depth int) (Value, error) {
	if d.pos >= len(d.data) {
		return Value{}, d.errorf("unexpected end of input")
	}
	switch c := d.data[d.pos]; {
	case c == '{':
		return d.object(depth + 1)
	case c == '[':
		return d.array(depth + 1)
	case c == '"':
		s, err := d.str()
		if err != nil {
			return Value{}, err
		}
		return String(s), nil
	case c == 't':
		return d.literal("true", True)
	case c == 'f':
		return d.literal("false", False)
	case c == 'n':
		return d.literal("null", Value{})
	case c == '-' || c >= '0' && c <= '9':
		return d.number()
	}
	return Value{}, d.errorf("unexpected character " + strconv.QuoteRune(rune(d.data[d.pos])))
}

func (d *decoder) array(depth int) (Value, error) {
	if depth > maxDepth {
		return Value{}, d.errorf("nesting too deep")
	}
	d.pos++ // [
	d.skip()
	if d.pos < len(d.data) && d.data[d.pos] == ']' {
		d.pos++
		return emptyList, nil
	}
	var items []Value
	for {
		d.skip()
		v, err := d.value(depth)
		if err != nil {
			return Value{}, err
		}
		items = append(items, v)
		d.skip()
		if d.pos >= len(d.data) {
			return Value{}, d.errorf("unexpected end of input in an array")
		}
		switch d.data[d.pos] {
		case ',':
			d.pos++
		case ']':
			d.pos++
			return List(items...), nil
		default:
			return Value{}, d.errorf("expected , or ] in an array")
		}
	}
}

func (d *decoder) object(depth int) (Value, error) {
	if depth > maxDepth {
		return Value{}, d.errorf("nesting too deep")
	}
	d.pos++ // {
	d.skip()
	if d.pos < len(d.data) && d.data[d.pos] == '}' {
		d.pos++
		return emptyObject, nil
	}
	var keys []string
	var vals []Value
	var index map[string]int
	for {
		d.skip()
		if d.pos >= len(d.data) || d.data[d.pos] != '"' {
			return Value{}, d.errorf("expected a string key in an object")
		}
		k, err := d.str()
		if err != nil {
			return Value{}, err
		}
		d.skip()
		if d.pos >= len(d.data) || d.data[d.pos] != ':' {
			return Value{}, d.errorf("expected : after an object key")
		}
		d.pos++
		d.skip()
		v, err := d.value(depth)
		if err != nil {
			return Value{}, err
		}
		// A repeated key keeps its first place and its last value.
		i := -1
		if index != nil {
			if j, ok := index[k]; ok {
				i = j
			}
		} else {
			i = indexOf(keys, k)
		}
		if i >= 0 {
			vals[i] = v
		} else {
			keys = append(keys, k)
			vals = append(vals, v)
			if index != nil {
				index[k] = len(keys) - 1
			} else if len(keys) >= 16 {
				index = make(map[string]int, 32)
				for j, key := range keys {
					index[key] = j
				}
			}
		}
		d.skip()
		if d.pos >= len(d.data) {
			return Value{}, d.errorf("unexpected end of input in an object")
		}
		switch d.data[d.pos] {
		case ',':
			d.pos++
		case '}':
			d.pos++
			if d.ext && len(keys) == 1 && keys[0] == "$error" && vals[0].k == KindObject {
				kind, _ := vals[0].Get("kind")
				msg, _ := vals[0].Get("message")
				if ks, ok := kind.AsString(); ok {
					return Error(ks, msg.Str()), nil
				}
			}
			return newObject(keys, vals), nil
		default:
			return Value{}, d.errorf("expected , or } in an object")
		}
	}
}

// str decodes a string at d.pos (which is '"').
func (d *decoder) str() (string, error) {
	d.pos++
	start := d.pos
	// Fast path: no escapes, valid ASCII or UTF-8.
	for i := start; i < len(d.data); i++ {
		c := d.data[i]
		if c == '"' {
			s := d.data[start:i]
			if utf8.Valid(s) {
				d.pos = i + 1
				return string(s), nil
			}
			break
		}
		if c == '\\' || c < 0x20 {
			break
		}
	}
	var b []byte
	i := start
	for {
		if i >= len(d.data) {
			d.pos = i
			return "", d.errorf("unterminated string")
		}
		c := d.data[i]
		switch {
		case c == '"':
			d.pos = i + 1
			return string(b), nil
		case c < 0x20:
			d.pos = i
			return "", d.errorf("control character in a string")
		case c == '\\':
			if i+1 >= len(d.data) {
				d.pos = i
				return "", d.errorf("unterminated string")
			}
			e := d.data[i+1]
			i += 2
			switch e {
			case '"', '\\', '/':
				b = append(b, e)
			case 'b':
				b = append(b, '\b')
			case 'f':
				b = append(b, '\f')
			case 'n':
				b = append(b, '\n')
			case 'r':
				b = append(b, '\r')
			case 't':
				b = append(b, '\t')
			case 'u':
				r, ok := hex4(d.data, i)
				if !ok {
					d.pos = i
					return "", d.errorf("invalid \\u escape")
				}
				i += 4
				if utf16.IsSurrogate(r) {
					r2, ok := rune(-1), false
					if i+6 <= len(d.data) && d.data[i] == '\\' && d.data[i+1] == 'u' {
						r2, ok = hex4(d.data, i+2)
					}
					if dec := utf16.DecodeRune(r, r2); ok && dec != utf8.RuneError {
						r = dec
						i += 6
					} else {
						r = utf8.RuneError
					}
				}
				b = utf8.AppendRune(b, r)
			default:
				d.pos = i - 1
				return "", d.errorf("invalid escape")
			}
		case c < utf8.RuneSelf:
			b = append(b, c)
			i++
		default:
			r, size := utf8.DecodeRune(d.data[i:])
			b = utf8.AppendRune(b, r) // invalid bytes become U+FFFD
			i += size
		}
	}
}

func hex4(data []byte, i int) (rune, bool) {
	if i+4 > len(data) {
		return 0, false
	}
	var r rune
	for _, c := range data[i : i+4] {
		r <<= 4
		switch {
		case c >= '0' && c <= '9':
			r |= rune(c - '0')
		case c >= 'a' && c <= 'f':
			r |= rune(c - 'a' + 10)
		case c >= 'A' && c <= 'F':
			r |= rune(c - 'A' + 10)
		default:
			return 0, false
		}
	}
	return r, true
}

func (d *decoder) number() (Value, error) {
	start := d.pos
	i := d.pos
	if d.data[i] == '-' {
		i++
	}
	if i >= len(d.data) {
		d.pos = i
		return Value{}, d.errorf("invalid number")
	}
	var n int64
	digits := 0
	if d.data[i] == '0' {
		i++
		digits = 1
	} else if d.data[i] >= '1' && d.data[i] <= '9' {
		for i < len(d.data) && d.data[i] >= '0' && d.data[i] <= '9' {
			if digits < 18 {
				n = n*10 + int64(d.data[i]-'0')
			}
			digits++
			i++
		}
	} else {
		d.pos = i
		return Value{}, d.errorf("invalid number")
	}
	simple := true
	if i < len(d.data) && d.data[i] == '.' {
		simple = false
		i++
		j := i
		for i < len(d.data) && d.data[i] >= '0' && d.data[i] <= '9' {
			i++
		}
		if i == j {
			d.pos = i
			return Value{}, d.errorf("invalid number: digits expected after .")
		}
	}
	if i < len(d.data) && (d.data[i] == 'e' || d.data[i] == 'E') {
		simple = false
		i++
		if i < len(d.data) && (d.data[i] == '+' || d.data[i] == '-') {
			i++
		}
		j := i
		for i < len(d.data) && d.data[i] >= '0' && d.data[i] <= '9' {
			i++
		}
		if i == j {
			d.pos = i
			return Value{}, d.errorf("invalid number: digits expected in the exponent")
		}
	}
	d.pos = i
	if simple && digits <= 15 {
		if d.data[start] == '-' {
			if n == 0 {
				return Number(math.Copysign(0, -1)), nil
			}
			n = -n
		}
		return Number(float64(n)), nil
	}
	f, err := strconv.ParseFloat(string(d.data[start:i]), 64)
	if err != nil {
		d.pos = start
		return Value{}, d.errorf("number out of range")
	}
	return Number(f), nil
}
