package realcli

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"
)

// fakeCLI reads prompts from in, one JSON line each, and answers each of
// the first answered ones with an assistant line and a result on out,
// logging what it reads and writes; then it closes out, and reads in to
// its end.
func fakeCLI(in io.Reader, out io.WriteCloser, answered int, log *[]string) {
	defer io.Copy(io.Discard, in)
	defer out.Close()
	sc := bufio.NewScanner(in)
	for i := 0; i < answered && sc.Scan(); i++ {
		var m userMessage
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil || m.Type != "user" || m.Message.Role != "user" {
			*log = append(*log, fmt.Sprintf("bad line %s (%v)", sc.Bytes(), err))
			return
		}
		*log = append(*log, "got "+m.Message.Content)
		fmt.Fprintf(out, `{"type":"assistant","message":{"content":[]}}`+"\n")
		fmt.Fprintf(out, `{"type":"result","subtype":"success","result":"done %s","num_turns":%d}`+"\n", m.Message.Content, i+1)
		*log = append(*log, "result "+m.Message.Content)
	}
}

func TestConverse(t *testing.T) {
	tests := []struct {
		name     string
		prompts  []string
		answered int
		results  []string
		err      string
	}{
		{name: "one prompt", prompts: []string{"a"}, answered: 1, results: []string{"done a"}},
		{name: "each prompt after the result before", prompts: []string{"a", "b", "c"}, answered: 3, results: []string{"done a", "done b", "done c"}},
		{name: "output ends early", prompts: []string{"a", "b"}, answered: 1, results: []string{"done a"}, err: "ended after 1 of 2 results"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			inR, inW := io.Pipe()
			outR, outW := io.Pipe()
			var log []string
			done := make(chan struct{})
			go func() { defer close(done); fakeCLI(inR, outW, tt.answered, &log) }()
			results, err := converse(outR, inW, tt.prompts)
			inW.Close()
			<-done
			if tt.err == "" && err != nil || tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err)) {
				t.Fatalf("converse(%q) error %v, want %q", tt.prompts, err, tt.err)
			}
			var got []string
			for _, r := range results {
				got = append(got, r.Result)
			}
			if !slices.Equal(got, tt.results) {
				t.Errorf("converse(%q) = %q, want %q", tt.prompts, got, tt.results)
			}
			// The CLI read each prompt after it wrote the result before.
			var want []string
			for _, p := range tt.prompts[:tt.answered] {
				want = append(want, "got "+p, "result "+p)
			}
			if !slices.Equal(log, want) {
				t.Errorf("the CLI saw %q, want %q", log, want)
			}
		})
	}
}
