package claudecode_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/evosignal/evosignal/internal/adapter/claudecode"
	"github.com/evosignal/evosignal/internal/events"
	"github.com/evosignal/evosignal/internal/plandialect"
	"github.com/evosignal/evosignal/internal/workshop/adaptertest"
	"github.com/evosignal/evosignal/internal/workshop/realcli"
)

// realTranscript is what the real Claude Code 2.1.332 wrote as its
// transcript when internal/workshop/realcli drove it.
const realTranscript = "../../../testdata/realcli/claude-code/transcript.jsonl"

// translateTranscript translates the transcripts ins, one file each, and
// returns the events as JSON lines (checked against the contract), the
// totals and the malformed lines.
func translateTranscript(tb testing.TB, ins ...[]byte) ([]*events.Event, []byte, claudecode.TranscriptCounts, []string) {
	tb.Helper()
	s := &sink{}
	cfg := claudecode.Config{Agent: "claude-code", Source: source, Model: "unknown", Plan: plandialect.DefaultConfig(), Files: plandialect.DefaultFilesConfig()}
	tr, err := claudecode.NewTranscript(cfg, s)
	if err != nil {
		tb.Fatal(err)
	}
	var bad []string
	ctx := context.Background()
	for _, in := range ins {
		if err := tr.Read(ctx, bytes.NewReader(in), func(e *claudecode.LineError) { bad = append(bad, e.Error()) }); err != nil {
			tb.Fatal(err)
		}
	}
	if err := tr.Close(ctx); err != nil {
		tb.Fatal(err)
	}
	var buf bytes.Buffer
	for _, e := range s.evs {
		b, err := json.Marshal(e)
		if err != nil {
			tb.Fatal(err)
		}
		buf.Write(append(b, '\n'))
	}
	adaptertest.DecodeLines(tb, buf.Bytes())
	return s.evs, buf.Bytes(), tr.Stats(), bad
}

// truthOf counts what realcli.Truth counts in evs.
func truthOf(tb testing.TB, evs []*events.Event) realcli.Truth {
	tb.Helper()
	got, err := realcli.TruthOf(evs)
	if err != nil {
		tb.Fatal(err)
	}
	return got
}

func trace(tb testing.TB, evs []*events.Event) string {
	tb.Helper()
	var lines []string
	for _, e := range evs {
		lines = append(lines, e.Subject[8:]+" "+e.ID+" "+adaptertest.Render(tb, e))
	}
	return strings.Join(lines, "\n")
}

// TestRealCLITranscript bridges the transcript the real Claude Code wrote
// for ClaudeCodeScenario: the script's truth, counted by hand in
// testdata/realcli/README.md, comes out exactly, both requests ended at
// their final answers; the same file translated again is byte for byte
// the same.
func TestRealCLITranscript(t *testing.T) {
	in, err := os.ReadFile(realTranscript)
	if err != nil {
		t.Fatal(err)
	}
	evs, first, c, bad := translateTranscript(t, in)
	if len(bad) > 0 {
		t.Fatalf("malformed lines: %v", bad)
	}
	want := realcli.ClaudeCodeScenario(t.TempDir()).Truth
	if got := truthOf(t, evs); got != want {
		t.Fatalf("translated %+v, want %+v\n%s", got, want, trace(t, evs))
	}
	if c.Requests != 2 || c.Ended != 2 || c.Open != 0 || c.Malformed != 0 || c.Quality != (claudecode.TranscriptCounts{}).Quality {
		t.Errorf("counts %+v: want 2 requests ended, none open, no malformed line, no data-quality note", c)
	}
	_, again, _, _ := translateTranscript(t, in)
	if !bytes.Equal(first, again) {
		t.Errorf("the same transcript translated again gives other events")
	}
	t.Logf("%+v\n%s", c, trace(t, evs))
}

// TestRealCLITranscriptMatchesHooks: the transcript and the hook log of
// the same runs are the same requests: the same events by id, type and
// content, but for the times (the lines' against the hook envelope's),
// the durations, the iterations (model messages against prompts), the
// model (the hooks of 2.1.332 name none) and the model calls (only the
// transcript has them, with their usage).
func TestRealCLITranscriptMatchesHooks(t *testing.T) {
	in, err := os.ReadFile(realTranscript)
	if err != nil {
		t.Fatal(err)
	}
	hookLog, err := os.ReadFile("../../../testdata/realcli/claude-code/hooks.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	fromTranscript, _, _, _ := translateTranscript(t, in)
	fromHooks, _, _ := translate(t, hookLog)
	render := func(evs []*events.Event) []string {
		var out []string
		for _, e := range evs {
			if e.Type == events.ModelCalled {
				continue // hooks carry no model calls
			}
			r := adaptertest.Render(t, e)
			r, _, _ = strings.Cut(r, " ms=")
			r, _, _ = strings.Cut(r, " iterations=")
			r = model.ReplaceAllString(r, "")
			out = append(out, e.ID+" "+r)
		}
		return out
	}
	got, want := render(fromTranscript), render(fromHooks.evs)
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("from the transcript:\n%s\nfrom the hooks:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

var model = regexp.MustCompile(` model=\S+`)

// TestRealCLITranscriptUsage: the tokens counted once per message are the
// totals Claude Code's own cost-state line gives at the end of the file
// (its totals run across --resume).
func TestRealCLITranscriptUsage(t *testing.T) {
	in, err := os.ReadFile(realTranscript)
	if err != nil {
		t.Fatal(err)
	}
	var last struct {
		ModelUsage map[string]struct {
			Input         int64 `json:"inputTokens"`
			Output        int64 `json:"outputTokens"`
			CacheRead     int64 `json:"cacheReadInputTokens"`
			CacheCreation int64 `json:"cacheCreationInputTokens"`
		} `json:"modelUsage"`
	}
	for line := range bytes.Lines(in) {
		if bytes.Contains(line, []byte(`"type":"cost-state"`)) {
			if err := json.Unmarshal(line, &last); err != nil {
				t.Fatal(err)
			}
		}
	}
	var want claudecode.Usage
	for _, u := range last.ModelUsage {
		want.Input += u.Input
		want.Output += u.Output
		want.CacheRead += u.CacheRead
		want.CacheCreation += u.CacheCreation
	}
	evs, _, c, _ := translateTranscript(t, in)
	if want.Input == 0 || c.Usage != want {
		t.Errorf("usage %v, want cost-state's %v", c.Usage, want)
	}
	// The agent.model.called events carry the same tokens: input all the
	// prompt's (cache reads and writes included), cached the cache reads.
	var input, output, cached int64
	for _, e := range evs {
		if e.Type != events.ModelCalled {
			continue
		}
		p, _ := e.Payload()
		d := p.(*events.ModelCalledData)
		if d.InputTokens == nil || d.OutputTokens == nil || d.CachedInputTokens == nil {
			t.Fatalf("model call %s without its tokens", e.ID)
		}
		input, output, cached = input+*d.InputTokens, output+*d.OutputTokens, cached+*d.CachedInputTokens
	}
	if w := want.Input + want.CacheRead + want.CacheCreation; input != w || output != want.Output || cached != want.CacheRead {
		t.Errorf("model calls' tokens %d/%d/%d, want %d/%d/%d", input, output, cached, w, want.Output, want.CacheRead)
	}
}

// TestTranscriptPrefixes: a transcript cut after any line (as bridge
// -follow reads one being written) gives a prefix of the events of the
// whole file, byte for byte: nothing is emitted at the end of the input
// that a longer read would emit otherwise. Only a request's final answer
// ends it; cut before it, the request is open.
func TestTranscriptPrefixes(t *testing.T) {
	in, err := os.ReadFile(realTranscript)
	if err != nil {
		t.Fatal(err)
	}
	_, whole, _, _ := translateTranscript(t, in)
	var cut []byte
	for line := range bytes.Lines(in) {
		cut = append(cut, line...)
		_, got, c, _ := translateTranscript(t, cut)
		if !bytes.HasPrefix(whole, got) {
			t.Fatalf("cut after line %d: the events are not a prefix of the whole file's", c.Records)
		}
		if c.Requests != c.Ended+c.Open {
			t.Fatalf("cut after line %d: %+v: requests neither ended nor open", c.Records, c)
		}
	}
}

// TestTranscriptSidechains translates a transcript written to
// 2.1.332's format (testdata/transcript.jsonl; no sub-agent was scripted
// for the real CLI) with a sub-agent's lines in the file and a
// subagents/ file of another: the parent's Task call is one real call; the
// sub-agents' lines, calls and tokens are counted apart, not as the
// request's. It also holds a final answer split over two lines, a request
// without a final answer ended by the next prompt (at its last line), a
// prompt without promptId (numbered), a line that is not JSON, and a
// request left open at the end.
func TestTranscriptSidechains(t *testing.T) {
	in, err := os.ReadFile("testdata/transcript.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	sub, err := os.ReadFile("testdata/subagent.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	evs, _, c, bad := translateTranscript(t, in, sub)
	var got []string
	for _, e := range evs {
		got = append(got, e.ID+" "+adaptertest.Render(t, e))
	}
	want := []string{
		`s1/p1/start started goal="Review the parser" agent=claude-code model=claude-opus-5-5 tools=`,
		// input 100 + cache read 1000 + cache creation 5; 900 ms since the prompt
		`s1/p1/msg_1/model model claude-opus-5-5 task=- tokens=1105/10/1000 ms=900`,
		`s1/p1/toolu_task tool Task task=- hint=- ok ms=4000`,
		`s1/p1/msg_2/model model claude-opus-5-5 task=- tokens=200/20/0 ms=1000`, // once for its two lines
		`s1/p1/end ended unknown replans=0 calls=1 failed=0 iterations=2 ms=5900 usage=2:1305/30/1000`,
		`s1/start started goal="Fix it" agent=claude-code model=claude-opus-5-5 tools=`,
		`s1/msg_3/model model claude-opus-5-5 task=- tokens=300/30/0 ms=1000`,
		`s1/toolu_read tool Read task=- hint=- ok ms=1500`,
		`s1/end ended unknown replans=0 calls=1 failed=0 iterations=1 ms=2500 usage=1:300/30/0`,
		`s1/2/start started goal="Just rebuild it" agent=claude-code model=claude-opus-5-5 tools=`,
		`s1/2/msg_4/model model claude-opus-5-5 task=- tokens=400/40/0 ms=1000`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("events:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if len(bad) != 1 || !strings.HasPrefix(bad[0], "line 9: not a transcript line") {
		t.Errorf("malformed %q, want line 9", bad)
	}
	wantC := claudecode.TranscriptCounts{
		Files: 2, Records: 21, Events: 11, Malformed: 1, Requests: 3, Ended: 2, Open: 1,
		Skipped: map[string]int64{"queue-operation": 1, "system": 1}, Ignored: 1,
		Sidechain: claudecode.Sidechain{Lines: 7, Calls: 2, Failed: 1, Usage: claudecode.Usage{Input: 180, Output: 18}},
		Usage:     claudecode.Usage{Input: 1000, Output: 100, CacheRead: 1000, CacheCreation: 5},
	}
	if !reflect.DeepEqual(c, wantC) {
		t.Errorf("counts\n%+v\nwant\n%+v", c, wantC)
	}
}
