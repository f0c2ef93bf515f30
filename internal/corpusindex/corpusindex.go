// Package corpusindex reads the INDEX.md of the nano-vm corpus
// (../shared/corpus/nanovm and its copy in tests/nanovm/corpus): a
// Markdown table whose last columns are a program's validation by
// nano-vm ("VALID", "INVALID: …") and the path it is saved as.
package corpusindex

import (
	"errors"
	"os"
	"strings"
)

// Invalid returns the saved-as paths of the programs the INDEX.md at
// path marks INVALID (nano-vm refuses to load them). An index that marks
// none is an error: its format has changed.
func Invalid(path string) (map[string]bool, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	invalid := map[string]bool{}
	for _, line := range strings.Split(string(data), "\n") {
		cells := strings.Split(line, "|")
		if len(cells) < 9 {
			continue
		}
		if strings.HasPrefix(strings.TrimSpace(cells[len(cells)-3]), "INVALID") {
			invalid[strings.TrimSpace(cells[len(cells)-2])] = true
		}
	}
	if len(invalid) == 0 {
		return nil, errors.New(path + " lists no invalid program: its format changed?")
	}
	return invalid, nil
}
