package rpcsim

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"
)

// The same seed gives the same stream and truth; every line is one
// compact JSON object {"data":…,"event":…} with its keys in order, as
// SkillLite writes it.
func TestGenerate(t *testing.T) {
	a, ta := Generate(Config{Seed: 3, Turns: 40})
	b, tb := Generate(Config{Seed: 3, Turns: 40})
	if !bytes.Equal(a, b) || !reflect.DeepEqual(ta, tb) {
		t.Fatal("the same seed gave two streams")
	}
	if c, _ := Generate(Config{Seed: 4, Turns: 40}); bytes.Equal(a, c) {
		t.Fatal("two seeds gave one stream")
	}
	for i, line := range bytes.Split(bytes.TrimSuffix(a, []byte("\n")), []byte("\n")) {
		var m map[string]json.RawMessage
		if err := json.Unmarshal(line, &m); err != nil || len(m) != 2 || m["data"] == nil || m["event"] == nil {
			t.Fatalf("line %d is not {data, event}: %s", i+1, line)
		}
		if !bytes.HasPrefix(line, []byte(`{"data":`)) {
			t.Fatalf("line %d: keys out of order: %s", i+1, line)
		}
	}
	if ta.Sessions+ta.PlainAnswers != 40 {
		t.Errorf("%d sessions and %d plain answers, want 40 turns", ta.Sessions, ta.PlainAnswers)
	}
}
