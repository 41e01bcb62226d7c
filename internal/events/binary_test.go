package events_test

import (
	"encoding/json"
	"testing"

	"github.com/evosignal/evosignal/internal/events"
)

func TestStructured(t *testing.T) {
	for _, tc := range []struct {
		name   string
		header map[string][]string
		body   string
		want   string
	}{
		{"structured passes through", map[string][]string{"Content-Type": {"application/cloudevents+json"}}, `{"id":"1"}`, `{"id":"1"}`},
		{"no headers", nil, `{"id":"1"}`, `{"id":"1"}`},
		{"binary", map[string][]string{
			"ce-specversion": {"1.0"}, "ce-id": {"a%20b"}, "ce-source": {"coder/host-1"}, "ce-seq": {"3"},
			"Content-Type": {"application/json"},
		}, `{"k":1}`, `{"datacontenttype":"application/json","id":"a b","seq":3,"source":"coder/host-1","specversion":"1.0","data":{"k":1}}`},
		{"header names in any case", map[string][]string{"Ce-SpecVersion": {"1.0"}, "CE-ID": {"x"}, "content-type": {"application/json; charset=utf-8"}},
			`{}`, `{"datacontenttype":"application/json; charset=utf-8","id":"x","specversion":"1.0","data":{}}`},
		{"seq not an integer stays a string", map[string][]string{"ce-specversion": {"1.0"}, "ce-seq": {"03"}}, ``, `{"seq":"03","specversion":"1.0"}`},
		{"other media type as base64", map[string][]string{"ce-specversion": {"1.0"}, "content-type": {"text/plain"}}, `hi`,
			`{"datacontenttype":"text/plain","specversion":"1.0","data_base64":"aGk="}`},
		{"bad percent-encoding kept", map[string][]string{"ce-specversion": {"1.0"}, "ce-id": {"100%"}}, ``, `{"id":"100%","specversion":"1.0"}`},
		{"ce-datacontenttype wins", map[string][]string{"ce-specversion": {"1.0"}, "ce-datacontenttype": {"application/json"}, "content-type": {"text/plain"}}, `{}`,
			`{"datacontenttype":"application/json","specversion":"1.0","data":{}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := string(events.Structured(tc.header, []byte(tc.body))); got != tc.want {
				t.Fatalf("Structured(%v, %s) = %s, want %s", tc.header, tc.body, got, tc.want)
			}
		})
	}
}

// A binary-mode message with a JSON body always becomes one JSON object.
func FuzzStructured(f *testing.F) {
	f.Add("1.0", "id-1", "coder/a", "3", "application/json", []byte(`{"a":[1,2]}`))
	f.Add("1.0", "%zz", "x", "-0", "text/plain", []byte("not json"))
	f.Fuzz(func(t *testing.T, spec, id, source, seq, ct string, body []byte) {
		h := map[string][]string{"ce-specversion": {spec}, "ce-id": {id}, "ce-source": {source}, "ce-seq": {seq}, "Content-Type": {ct}}
		out := events.Structured(h, body)
		if !json.Valid(body) && len(body) > 0 {
			return // a JSON media type places the body as it is, for Decode to reject
		}
		var m map[string]any
		if err := json.Unmarshal(out, &m); err != nil {
			t.Fatalf("Structured gave invalid JSON %q: %v", out, err)
		}
	})
}
