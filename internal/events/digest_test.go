package events

import "testing"

func TestArgsDigest(t *testing.T) {
	a := ArgsDigest([]byte(`{"path":"a.go","opts":{"n":1,"all":true}}`))
	if len(a) != 16 {
		t.Fatalf("ArgsDigest = %q, want 16 hex digits", a)
	}
	same := []string{
		`{"opts":{"all":true,"n":1},"path":"a.go"}`,
		" {\n  \"path\": \"a.go\",\n  \"opts\": {\"n\": 1, \"all\": true}\n} ",
	}
	for _, s := range same {
		if got := ArgsDigest([]byte(s)); got != a {
			t.Errorf("ArgsDigest(%s) = %s, want %s (same arguments)", s, got, a)
		}
	}
	other := []string{
		`{"path":"b.go","opts":{"n":1,"all":true}}`,
		`{"path":"a.go","opts":{"n":1.0,"all":true}}`,
		`{"path":"a.go"}`,
		`not json`,
	}
	for _, s := range other {
		if got := ArgsDigest([]byte(s)); got == a || got == "" {
			t.Errorf("ArgsDigest(%s) = %q, want another non-empty digest", s, got)
		}
	}
	for _, s := range []string{"", " ", "null"} {
		if got := ArgsDigest([]byte(s)); got != "" {
			t.Errorf("ArgsDigest(%q) = %q, want none", s, got)
		}
	}
}
