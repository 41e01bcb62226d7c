package validate

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

func TestRunListsEveryViolationAndFails(t *testing.T) {
	valid, err := filepath.Glob("../../../testdata/events/valid/*.jsonl")
	if err != nil || len(valid) == 0 {
		t.Fatalf("no valid samples: %v", err)
	}
	good, err := os.ReadFile(valid[0])
	if err != nil {
		t.Fatal(err)
	}
	bad := `{"specversion":"1.0","id":"x","source":"a/b","type":"agent.tool.called","time":"2026-01-01 10:00:00","subject":"s","datacontenttype":"application/json","seq":0,"data":{}}`
	file := filepath.Join(t.TempDir(), "events.jsonl")
	if err := os.WriteFile(file, []byte(strings.TrimRight(string(good), "\n")+"\n"+bad+"\n{cut"), 0o644); err != nil {
		t.Fatal(err)
	}
	lines := strings.Count(strings.TrimRight(string(good), "\n"), "\n") + 2
	var out, errOut bytes.Buffer
	err = run(t.Context(), []string{file}, nil, &out, &errOut)
	if !errors.Is(err, errInvalid) {
		t.Fatalf("run = %v, want errInvalid\n%s", err, errOut.String())
	}
	for _, want := range []string{
		file + ":" + itoa(lines) + ": /seq: ",
		file + ":" + itoa(lines) + ": /time: ",
		file + ":" + itoa(lines) + ": /data: ",
		file + ":" + itoa(lines+1) + ": malformed_json: ",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	if !strings.Contains(errOut.String(), "2 of "+itoa(lines+1)+" events invalid") {
		t.Errorf("summary = %q", errOut.String())
	}

	out.Reset()
	errOut.Reset()
	if err := run(t.Context(), nil, bytes.NewReader(good), &out, &errOut); err != nil || out.Len() != 0 {
		t.Fatalf("run on valid stdin = %v, printed %q", err, out.String())
	}
}

func itoa(n int) string { return strconv.Itoa(n) }
