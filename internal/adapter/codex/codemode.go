package codex

import (
	"bytes"
	"encoding/json"
	"regexp"
)

// CodeModeTool is the custom tool a Codex model in code mode calls instead
// of function tools: its input is JavaScript that calls the tools
// (tools.update_plan(…), tools.exec_command(…)).
const CodeModeTool = "exec"

// site is one nested tool call written in a code-mode script: the tool it
// names and, for a plan call, its argument when it is a JSON literal (nil
// when it is anything else: a variable, a JavaScript object with unquoted
// keys, a computed value).
type site struct {
	Tool string
	Args []byte
}

var toolCall = regexp.MustCompile(`\btools\.([A-Za-z_$][A-Za-z0-9_$]*)\s*\(`)

// sites returns the nested tool calls of a code-mode script in the order
// they are written. It reads the text, it does not run it: a call in a loop
// is one site, a call in a branch not taken or in a string or comment is a
// site all the same.
func sites(script string, isPlan func(tool string) bool) []site {
	var out []site
	for _, m := range toolCall.FindAllStringSubmatchIndex(script, -1) {
		s := site{Tool: script[m[2]:m[3]]}
		if isPlan(s.Tool) {
			s.Args = jsonLiteral(script[m[1]:])
		}
		out = append(out, s)
	}
	return out
}

// jsonLiteral returns the JSON object that rest begins with (blanks
// before it allowed) when it is followed by the call's closing
// parenthesis, else nil.
func jsonLiteral(rest string) []byte {
	dec := json.NewDecoder(bytes.NewReader([]byte(rest)))
	var raw json.RawMessage
	if err := dec.Decode(&raw); err != nil || len(raw) == 0 || raw[0] != '{' {
		return nil
	}
	tail := bytes.TrimLeft([]byte(rest[dec.InputOffset():]), " \t\r\n")
	if len(tail) == 0 || tail[0] != ')' {
		return nil
	}
	return raw
}
