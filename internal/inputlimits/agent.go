package inputlimits

import (
	"fmt"
	"strings"
)

// VVMProgram returns about size bytes of ordinary VVM: defs with agent
// calls, predicates, if/elif/else and literals, each called and its
// result exported (the kind of program frontend/vvm's limits tests
// measure).
func VVMProgram(size int) []byte {
	var b strings.Builder
	b.WriteString("agent classifier(model=\"haiku\", prompt=\"Classify emails by intent.\")\n")
	for i := 0; b.Len() < size; i++ {
		fmt.Fprintf(&b, `def f%[1]d(email, tone):
  c = @classifier `+"`Classify this email: {email} {tone}`"+`(email)
  if ?`+"`complaint or frustrated customer`"+`(c):
    tone = "empathetic and apologetic"
  elif c == "x" or tone != "y":
    tone = "friendly" + " and " + "helpful"
  else:
    tone = [1, 2, 3, {a: 1, b: "two"}]
  return {original: email, classification: c, response: tone}

r%[1]d = f%[1]d("hello", "calm")
export r%[1]d
`, i)
	}
	return []byte(b.String())
}

// SpellProgram returns about size bytes of an ordinary Grimoire spell:
// one trigger with many assignments, conditions, lists and emits.
func SpellProgram(size int) []byte {
	var b strings.Builder
	b.WriteString("spell Big\n\n  params:\n    limit: 10\n\n  on manual:\n")
	for i := 0; b.Len() < size; i++ {
		fmt.Fprintf(&b, `    a%[1]d = 1 + 2 * params.limit
    if a%[1]d > 2 and not (a%[1]d == 5):
      b%[1]d = [a%[1]d, 2, 3]
      emit step(n=%[1]d, v=b%[1]d[0])
    else:
      emit other(n=%[1]d)
`, i)
	}
	return []byte(b.String())
}

// NanoVMProgram returns about size bytes of an ordinary nano-vm program
// (JSON): tool steps with templated arguments, each followed by a
// condition step.
func NanoVMProgram(size int) []byte {
	var b strings.Builder
	b.WriteString(`{"steps": [`)
	for i := 0; ; i++ {
		fmt.Fprintf(&b, `{"id": "s%[1]d", "type": "tool", "tool": "get_order", "args": {"id": "$order_id", "note": "refund for $order.customer.name", "tags": ["auto", "$order_id"]}, "output_key": "o%[1]d", "next_step": "c%[1]d"},
{"id": "c%[1]d", "type": "condition", "condition": "$o%[1]d.amount > 10 and ($o%[1]d.status == 'ok' or not $flag)", "then": "s%[2]d", "otherwise": "s%[2]d"},
`, i, i+1)
		if b.Len() >= size {
			fmt.Fprintf(&b, `{"id": "s%d", "type": "tool", "tool": "noop"}`, i+1)
			break
		}
	}
	b.WriteString("]}")
	return []byte(b.String())
}
