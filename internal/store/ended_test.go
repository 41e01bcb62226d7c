package store

import (
	"fmt"
	"strings"
	"testing"
)

// A model call after its session's end is dead-lettered as
// after_session_end, whether the end is stored already or earlier in the
// same batch; a model call before the end, and one of another session,
// are stored; its tokens are never summed.
func TestModelCallAfterSessionEnd(t *testing.T) {
	s := openTemp(t)
	ctx := t.Context()
	ev := func(session, typ string, seq int, data string) Item {
		return Item{Event: decode(t, fmt.Sprintf(`{"specversion":"1.0","id":"%s-%d","source":"coder/h/w1","type":"%s",`+
			`"time":"2026-11-29T10:00:%02dZ","subject":"%s","datacontenttype":"application/json","seq":%d,"data":%s}`,
			session, seq, typ, seq, session, seq, data))}
	}
	model := func(session string, seq int) Item {
		return ev(session, "agent.model.called", seq, `{"task_id":null,"input_tokens":100,"output_tokens":7,"duration_ms":5}`)
	}
	end := func(session string, seq int) Item {
		return ev(session, "agent.session.ended", seq, `{"outcome":"success","replans":0,"tool_calls":0,"failed_tool_calls":0,"iterations":1,"duration_ms":9}`)
	}
	res, err := s.Write(ctx, Batch{Origin: FromFile, Items: []Item{model("s1", 1), end("s1", 2), model("s1", 3), model("s2", 9)}})
	if err != nil {
		t.Fatal(err)
	}
	if want := (Result{Accepted: 3, DeadLetters: 1}); res != want {
		t.Fatalf("Write = %+v, want %+v", res, want)
	}
	res, err = s.Write(ctx, Batch{Origin: FromFile, Items: []Item{model("s1", 4), end("s2", 10)}})
	if err != nil {
		t.Fatal(err)
	}
	if want := (Result{Accepted: 1, DeadLetters: 1}); res != want {
		t.Fatalf("second Write = %+v, want %+v", res, want)
	}
	rows, err := s.DB().Query(`SELECT reason_code, reason, id FROM dead_letters ORDER BY id`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var got []string
	for rows.Next() {
		var code, reason, id string
		if err := rows.Scan(&code, &reason, &id); err != nil {
			t.Fatal(err)
		}
		if code != ReasonAfterSessionEnd || !strings.Contains(reason, "after its session's agent.session.ended at seq 2") {
			t.Errorf("dead letter %s: %s %q", id, code, reason)
		}
		got = append(got, id)
	}
	if strings.Join(got, ",") != "s1-3,s1-4" {
		t.Errorf("dead letters %v, want s1-3 and s1-4", got)
	}
	var calls, tokens int64
	if err := s.DB().QueryRow(`SELECT count(*), sum(input_tokens) FROM model_calls`).Scan(&calls, &tokens); err != nil {
		t.Fatal(err)
	}
	if calls != 2 || tokens != 200 {
		t.Errorf("model_calls: %d calls, %d input tokens; want 2 and 200 (s1's first, s2's)", calls, tokens)
	}
}
