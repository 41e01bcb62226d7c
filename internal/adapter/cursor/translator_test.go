package cursor_test

import (
	"context"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/evosignal/evosignal/internal/adapter/cursor"
	"github.com/evosignal/evosignal/internal/events"
	"github.com/evosignal/evosignal/internal/plandialect"
)

type sink struct{ evs []*events.Event }

func (s *sink) Send(_ context.Context, e *events.Event) error { s.evs = append(s.evs, e); return nil }

func translate(tb testing.TB, input string) (*sink, cursor.Counts) {
	tb.Helper()
	s := &sink{}
	tr, err := cursor.NewTranslator(cursor.Config{Source: "cursor/test", Model: "unknown",
		Plan: plandialect.DefaultConfig(), Files: plandialect.DefaultFilesConfig()}, s, func() time.Time { return time.Unix(0, 0) })
	if err != nil {
		tb.Fatal(err)
	}
	ctx := context.Background()
	if err := tr.Read(ctx, strings.NewReader(input), func(e *cursor.RecordError) { tb.Errorf("malformed: %v", e) }); err != nil {
		tb.Fatal(err)
	}
	if err := tr.Close(ctx); err != nil {
		tb.Fatal(err)
	}
	return s, tr.Stats()
}

// TestFixture: the published session (testdata/session.jsonl): the plan a
// person saved in Plan Mode is seen by beforeReadFile (created), a todo
// ticked by afterFileEdit is progress, a todo added is a replan, and the
// edit of code, the shell command and the MCP call are the real tool calls.
func TestFixture(t *testing.T) {
	b, err := os.ReadFile("testdata/session.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	s, c := translate(t, string(b))
	var got []string
	for _, e := range s.evs {
		line := e.ID + " " + string(e.Type)
		p, err := e.Payload()
		if err != nil {
			t.Fatalf("%s: %v", e.ID, err)
		}
		switch d := p.(type) {
		case *events.ToolCalledData:
			line += " " + d.Tool + " control=" + strconv.FormatBool(d.Control)
			if d.TaskID != nil {
				line += " task=" + strconv.FormatInt(*d.TaskID, 10)
			}
		case *events.SessionStartedData:
			line += " goal=" + d.Goal + " model=" + d.Model
		case *events.SessionEndedData:
			line += " " + string(d.Outcome) + " replans=" + strconv.FormatInt(d.Replans, 10) + " calls=" + strconv.FormatInt(d.ToolCalls, 10)
		case *events.TaskCompletedData:
			line += " task=" + strconv.FormatInt(d.TaskID, 10)
		}
		got = append(got, line)
	}
	id := "4f0c2a9e-7d1b-4c55-9a3e-2b8d6f1e0c71"
	want := []string{
		id + "/start agent.session.started goal=Add retries to the upload client model=claude-4.5-sonnet",
		id + "/h2/plan agent.plan.created",
		id + "/h2 agent.tool.called read_file control=true",
		id + "/h4 agent.tool.called shell control=false task=1",
		id + "/h5/done/1 agent.task.completed task=1",
		id + "/h5 agent.tool.called edit_file control=true",
		id + "/h6 agent.tool.called edit_file control=false task=2",
		id + "/h7/plan agent.plan.updated",
		id + "/h7 agent.tool.called edit_file control=true",
		id + "/h8 agent.tool.called search_docs control=false task=2",
		id + "/end agent.session.ended unknown replans=1 calls=6",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("events:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if c.Sessions != 1 || c.Ended != 1 || c.Ignored != 2 || c.Malformed != 0 || len(c.Quality.Notes()) != 0 {
		t.Errorf("counts %+v", c)
	}
}

// TestUnknownPrior: an edit of a plan file never seen whole is a
// data-quality note, not a plan; a stop with status aborted ends the
// conversation aborted.
func TestUnknownPrior(t *testing.T) {
	in := `{"hook_event_name":"afterFileEdit","conversation_id":"c1","workspace_roots":["/w"],"file_path":"todo.md","edits":[{"old_string":"- [ ] a","new_string":"- [x] a"}]}
{"hook_event_name":"stop","conversation_id":"c1","status":"aborted"}
`
	s, c := translate(t, in)
	var types []string
	for _, e := range s.evs {
		types = append(types, string(e.Type))
	}
	if strings.Join(types, " ") != "agent.session.started agent.tool.called agent.session.ended" {
		t.Errorf("events %v", types)
	}
	if c.Quality.PlanFileUnknownPrior != 1 || len(c.Quality.Notes()) != 1 {
		t.Errorf("quality %+v", c.Quality)
	}
	p, _ := s.evs[2].Payload()
	if o := p.(*events.SessionEndedData).Outcome; o != events.OutcomeAborted {
		t.Errorf("outcome %s, want aborted", o)
	}
}
