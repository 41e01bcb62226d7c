package golden

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// recorder is a testing.TB whose Fatalf records the failure and ends the
// calling goroutine, as the real one does.
type recorder struct {
	testing.TB
	failed string
}

func (r *recorder) Helper() {}
func (r *recorder) Fatalf(format string, args ...any) {
	r.failed = fmt.Sprintf(format, args...)
	runtime.Goexit()
}

// run calls check with a recorder and returns its failure, or "".
func run(t *testing.T, check func(tb testing.TB)) string {
	r := &recorder{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		check(r)
	}()
	<-done
	return r.failed
}

func TestCheck(t *testing.T) {
	dir := t.TempDir()
	file := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	tests := []struct {
		name      string
		check     func(tb testing.TB)
		wantFatal string // "" passes
	}{
		{"same bytes", func(tb testing.TB) { Check(tb, file("a", "x\n"), []byte("x\n")) }, ""},
		{"other bytes", func(tb testing.TB) { Check(tb, file("b", "x\n"), []byte("x")) }, "contents differ"},
		{"missing file", func(tb testing.TB) { Check(tb, filepath.Join(dir, "none"), []byte("x")) }, "-update to create it"},
		{"JSON numbers to 1e-9", func(tb testing.TB) { CheckJSON(tb, file("c", `{"a": 0.1}`), []byte(`{"a":0.1000000000001}`)) }, ""},
		{"JSON value differs", func(tb testing.TB) { CheckJSON(tb, file("d", `{"a": [1, 2]}`), []byte(`{"a": [1, 3]}`)) }, "at .a[1]: got 3, want 2"},
		{"JSON key missing", func(tb testing.TB) { CheckJSON(tb, file("e", `{"a": 1, "b": 2}`), []byte(`{"a": 1}`)) }, ".b: present false, want true"},
		{"JSON not JSON", func(tb testing.TB) { CheckJSON(tb, file("f", `{}`), []byte(`{`)) }, "output is not JSON"},
		{"own diff", func(tb testing.TB) {
			CheckWith(tb, file("g", "a"), []byte("b"), func(got, want []byte) string { return "told " + string(got) + string(want) })
		}, "told ba"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := run(t, tt.check)
			if tt.wantFatal == "" && got != "" || tt.wantFatal != "" && !strings.Contains(got, tt.wantFatal) {
				t.Fatalf("failure = %q, want one with %q", got, tt.wantFatal)
			}
		})
	}
}

func TestUpdateWrites(t *testing.T) {
	old := *update
	*update = true
	defer func() { *update = old }()
	p := filepath.Join(t.TempDir(), "g.json")
	if f := run(t, func(tb testing.TB) { CheckJSON(tb, p, []byte("new\n")) }); f != "" {
		t.Fatalf("with -update: %s", f)
	}
	if b, err := os.ReadFile(p); err != nil || string(b) != "new\n" {
		t.Fatalf("golden file = %q, %v; want the output as it is", b, err)
	}
}
