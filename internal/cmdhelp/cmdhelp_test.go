package cmdhelp

import (
	"strings"
	"testing"

	"github.com/peterbourgon/ff/v3/ffcli"
)

// A mistyped command is answered with the commands it may have meant:
// those it begins, or within two edits of it; none when nothing is near.
func TestUnknownNamesTheNearCommands(t *testing.T) {
	cmds := []*ffcli.Command{{Name: "serve"}, {Name: "simulate"}, {Name: "store"}}
	for name, want := range map[string]string{
		"serv":   `unknown command "serv" (did you mean serve?)`,
		"s":      `unknown command "s" (did you mean serve or simulate or store?)`,
		"stroe":  `unknown command "stroe" (did you mean serve or store?)`,
		"deploy": `unknown command "deploy"`,
	} {
		if got := Unknown(cmds, name).Error(); got != want {
			t.Errorf("Unknown(%q) = %s, want %s", name, got, want)
		}
	}
}

// Wrap keeps every line within the width, indented, and the text's own
// line breaks; a long list breaks after its commas.
func TestWrapKeepsTheWidth(t *testing.T) {
	text := strings.Repeat("word ", 60) + "\n" + strings.Repeat("a,", 80)
	for _, line := range strings.Split(Wrap(text, 4, 40), "\n") {
		if len(line) > 40 || !strings.HasPrefix(line, "    ") {
			t.Errorf("line %q: over 40 columns or not indented by 4", line)
		}
	}
	if got := strings.Count(Wrap("one\ntwo", 0, 40), "\n"); got != 1 {
		t.Errorf("the text's own line break: %d breaks, want 1", got)
	}
}
