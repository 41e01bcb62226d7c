package events

import (
	"bytes"
	"encoding/json"
	"mime"
	"net/url"
	"regexp"
	"sort"
	"strings"
)

// CloudEvents binary content mode (the NATS protocol binding, as the
// CloudEvents SDKs send by default): each attribute travels in a message
// header named "ce-" and the attribute's name, its value percent-encoded,
// and the data is the message body, its media type in the Content-Type
// header. Structured mode, the one this contract's documents use, sends the
// whole event as a JSON document in the body.

// binaryPrefix starts the header name of every attribute in binary mode.
const binaryPrefix = "ce-"

// integerAttrs are the attributes of the contract whose type is Integer: a
// header carries them as the canonical decimal string, the JSON event
// format as a number.
var integerAttrs = map[string]bool{attrSeq: true}

var canonicalInteger = regexp.MustCompile(`^-?(0|[1-9][0-9]{0,15})$`)

// Structured returns the event of a message in the JSON event format. A
// message in binary content mode (a ce-specversion header) is converted:
// its attributes become members of a JSON object, in the order of their
// names, with Content-Type as datacontenttype (unless a ce-datacontenttype
// header names it) and the body as data. The body is placed as it is when
// its media type is JSON (application/json or a +json suffix) or none is
// given, so that Decode checks it as it checks any event's data, malformed
// JSON included; any other body goes in data_base64. Any other message is
// structured already: body is returned unchanged.
//
// Header names are matched without regard to case; a header given more
// than once counts by its first value; a value that is not valid
// percent-encoding is taken as it is.
func Structured(header map[string][]string, body []byte) []byte {
	attrs := map[string]string{}
	contentType, hasContentType := "", false
	for name, values := range header {
		if len(values) == 0 {
			continue
		}
		lower := strings.ToLower(name)
		if lower == "content-type" {
			contentType, hasContentType = values[0], true
			continue
		}
		attr, ok := strings.CutPrefix(lower, binaryPrefix)
		if !ok || attr == "" {
			continue
		}
		v, err := url.PathUnescape(values[0])
		if err != nil {
			v = values[0]
		}
		attrs[attr] = v
	}
	if _, ok := attrs[attrSpecVersion]; !ok {
		return body
	}
	if _, ok := attrs[attrDataContentType]; !ok && hasContentType {
		attrs[attrDataContentType] = contentType
	}
	names := make([]string, 0, len(attrs))
	for name := range attrs {
		if name != "data" && name != "data_base64" {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	var b bytes.Buffer
	b.WriteByte('{')
	for i, name := range names {
		if i > 0 {
			b.WriteByte(',')
		}
		writeJSONString(&b, name)
		b.WriteByte(':')
		v := attrs[name]
		if integerAttrs[name] && canonicalInteger.MatchString(v) {
			b.WriteString(v)
		} else {
			writeJSONString(&b, v)
		}
	}
	if len(body) > 0 {
		if len(names) > 0 {
			b.WriteByte(',')
		}
		if ct, ok := attrs[attrDataContentType]; !ok || isJSONMediaType(ct) {
			b.WriteString(`"data":`)
			b.Write(body)
		} else {
			b.WriteString(`"data_base64":`)
			enc, _ := json.Marshal(body) // []byte marshals as base64
			b.Write(enc)
		}
	}
	b.WriteByte('}')
	return b.Bytes()
}

// isJSONMediaType says whether a Content-Type names JSON.
func isJSONMediaType(ct string) bool {
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil {
		return false
	}
	return mt == "application/json" || mt == "text/json" || strings.HasSuffix(mt, "+json")
}

func writeJSONString(b *bytes.Buffer, s string) {
	enc, _ := json.Marshal(s) // a string always marshals
	b.Write(enc)
}
