package events

import (
	"encoding/json"
	"strconv"
	"sync"
	"time"
)

// Decode parses and validates one message: a CloudEvents 1.0 event in
// structured JSON mode, checked, envelope and data, against the v1 schema
// (schema/v1/event.json). It accepts exactly the messages the schema
// accepts, provided they are I-JSON (RFC 7493): valid UTF-8, no lone
// surrogate escapes, no duplicate member names.
//
// Any error is an *Error: ReasonMalformed if raw is not such a JSON object,
// ReasonUnknownType if the envelope is valid but the type is not a v1 type,
// ReasonSchema otherwise.
//
// The returned event does not refer to raw. Its Time is in UTC. Its Data is
// the data member as sent, except that an integer written in another form
// than plain digits (1.0, 1e0, -0, which JSON Schema counts as integers) is
// rewritten as plain digits, so that every later reader of Data sees an
// integer. Extension values are strings, bools or json.Numbers.
//
// The event keeps its data read into Go (see Payload), from the parse that
// validated it, so that a reader of every event (the ingester) does not
// parse the data again.
//
// Decode is safe for concurrent use.
func Decode(raw []byte) (*Event, error) {
	return decodeEvent(raw, true)
}

// decodeEvent is Decode; typed says whether the event keeps its typed data
// (New's events do not: a publisher never reads them).
func decodeEvent(raw []byte, typed bool) (*Event, error) {
	d := decoders.Get().(*decoder)
	ev, err := d.decode(raw, typed)
	d.release()
	if err != nil {
		return nil, err
	}
	return ev, nil
}

// decoder holds the reusable state of one Decode or Payload call.
type decoder struct {
	t       tree
	v       validator
	scratch []byte
}

var decoders = sync.Pool{New: func() any { return new(decoder) }}

func (d *decoder) release() {
	d.t.src = nil
	if cap(d.t.nodes) > 1<<14 || cap(d.t.buf) > 1<<16 {
		return // let an outsized one go
	}
	decoders.Put(d)
}

// Envelope attribute names.
const (
	attrSpecVersion     = "specversion"
	attrID              = "id"
	attrSource          = "source"
	attrType            = "type"
	attrTime            = "time"
	attrSubject         = "subject"
	attrDataContentType = "datacontenttype"
	attrSeq             = "seq"
	attrDataSchema      = "dataschema"
	attrData            = "data"
)

// required lists the required envelope members, in the order a missing one
// is reported.
var required = [...]string{attrSpecVersion, attrID, attrSource, attrType, attrTime, attrSubject, attrDataContentType, attrSeq, attrData}

func (d *decoder) decode(raw []byte, typed bool) (*Event, *Error) {
	t := &d.t
	if err := t.parse(raw); err != nil {
		return nil, err
	}
	if k := t.nodes[0].kind; k != kObject {
		return nil, malformed("got " + k.String() + ", want a JSON object")
	}
	d.v.reset(t)

	// Envelope members, by node index of the value; 0 means absent.
	var specversion, id, source, typ, tm, subject, dct, seq, dataschema, data int32
	var at time.Time
	var seqv int64
	nExt := 0
	n := t.nodes[0].n
	k := int32(1)
	for m := int32(0); m < n; m++ {
		key := t.text(k)
		val := k + 1
		k = t.nodes[val].next
		vn := &t.nodes[val]
		var err *Error
		switch string(key) {
		case attrSpecVersion:
			specversion = val
			err = d.constant(val, SpecVersion, attrSpecVersion)
		case attrID:
			id = val
			if err = d.stringAttr(val, attrID); err == nil && !validID(t.text(val)) {
				err = attrErr(attrID, quote(t.text(val))+" is not 1 to 128 printable ASCII characters without spaces")
			}
		case attrSource:
			source = val
			if err = d.stringAttr(val, attrSource); err == nil && !validSource(t.text(val)) {
				err = attrErr(attrSource, quote(t.text(val))+" is not agent[/segment...], agent a NATS token of A-Z a-z 0-9 _ -, segments printable ASCII, at most 256 characters")
			}
		case attrType:
			typ = val
			if err = d.stringAttr(val, attrType); err == nil && vn.end == vn.off {
				err = attrErr(attrType, "empty string")
			}
		case attrTime:
			tm = val
			if err = d.stringAttr(val, attrTime); err == nil {
				var ok bool
				if at, ok = parseDateTime(t.text(val)); !ok {
					err = attrErr(attrTime, quote(t.text(val))+" is not an RFC 3339 date-time")
				} else if !InYearRange(at) {
					err = attrErr(attrTime, quote(t.text(val))+" falls in year "+strconv.Itoa(at.Year())+" UTC; times must be in years 0001-9999 UTC")
				}
			}
		case attrSubject:
			subject = val
			d.v.path = append(d.v.path[:0], seg{name: attrSubject})
			err = d.v.str(val, 1, 128, false)
		case attrDataContentType:
			dct = val
			err = d.constant(val, ContentType, attrDataContentType)
		case attrSeq:
			seq = val
			d.v.path = append(d.v.path[:0], seg{name: attrSeq})
			if err = d.v.integer(val, 1, false); err == nil {
				seqv, _, _ = classifyInt(t.raw(val))
			}
		case attrDataSchema:
			dataschema = val
			err = d.stringAttr(val, attrDataSchema)
		case attrData:
			data = val
			if vn.kind != kObject {
				err = attrErr(attrData, "got "+vn.kind.String()+", want object")
			}
		default:
			if !validExtName(key) {
				return nil, &Error{Reason: ReasonSchema, Path: pointer(nil, string(key)),
					Msg: "unknown attribute (an extension name is 1 to 20 lower-case letters or digits)"}
			}
			if vn.kind != kString && vn.kind != kNumber && vn.kind != kTrue && vn.kind != kFalse {
				err = attrErr(string(key), "got "+vn.kind.String()+", want an extension value: string, number or boolean")
			}
			nExt++
		}
		if err != nil {
			return nil, err
		}
	}
	for i, idx := range [...]int32{specversion, id, source, typ, tm, subject, dct, seq, data} {
		if idx == 0 {
			return nil, &Error{Reason: ReasonSchema, Path: pointer(nil, required[i]), Msg: "missing required attribute"}
		}
	}

	et, ok := lookupType(t.text(typ))
	if !ok {
		return nil, &Error{Reason: ReasonUnknownType, Path: "/type", Msg: quote(t.text(typ)) + " is not a v1 event type"}
	}
	d.v.reset(t) // seq is not stored raw: drop its fixup
	d.v.path = append(d.v.path, seg{name: attrData})
	if err := d.v.object(data, dataSpecs[et]); err != nil {
		return nil, err
	}

	// Build the event: one string for id, source and subject, one slice for
	// the data.
	idb, srcb, subb := t.text(id), t.text(source), t.text(subject)
	d.scratch = append(append(append(d.scratch[:0], idb...), srcb...), subb...)
	all := string(d.scratch)
	ev := &Event{
		SpecVersion:     SpecVersion,
		ID:              all[:len(idb)],
		Source:          all[len(idb) : len(idb)+len(srcb)],
		Type:            et,
		Time:            at,
		Subject:         all[len(idb)+len(srcb):],
		DataContentType: ContentType,
		Seq:             seqv,
		Data:            d.data(data),
	}
	if typed {
		ev.cache = readTyped(t, data, et, ev.Data)
	}
	if dataschema != 0 {
		ev.DataSchema = string(t.text(dataschema))
	}
	if nExt > 0 {
		ev.Extensions = make(map[string]any, nExt)
		k := int32(1)
		for m := int32(0); m < n; m++ {
			key, val := t.text(k), k+1
			k = t.nodes[val].next
			if isAttr(key) {
				continue
			}
			switch t.nodes[val].kind {
			case kString:
				ev.Extensions[string(key)] = string(t.text(val))
			case kNumber:
				ev.Extensions[string(key)] = json.Number(t.raw(val))
			case kTrue:
				ev.Extensions[string(key)] = true
			case kFalse:
				ev.Extensions[string(key)] = false
			}
		}
	}
	return ev, nil
}

// data returns a copy of data node i with integers made canonical.
func (d *decoder) data(i int32) json.RawMessage {
	t := &d.t
	nd := t.nodes[i]
	if len(d.v.fixups) == 0 {
		return append(json.RawMessage(nil), t.src[nd.off:nd.end]...)
	}
	b := make(json.RawMessage, 0, nd.end-nd.off)
	pos := nd.off
	for _, f := range d.v.fixups {
		fn := t.nodes[f.node]
		b = append(b, t.src[pos:fn.off]...)
		b = strconv.AppendInt(b, f.value, 10)
		pos = fn.end
	}
	return append(b, t.src[pos:nd.end]...)
}

func attrErr(name, msg string) *Error {
	return &Error{Reason: ReasonSchema, Path: pointer(nil, name), Msg: msg}
}

func (d *decoder) stringAttr(i int32, name string) *Error {
	if k := d.t.nodes[i].kind; k != kString {
		return attrErr(name, "got "+k.String()+", want string")
	}
	return nil
}

func (d *decoder) constant(i int32, want string, name string) *Error {
	if err := d.stringAttr(i, name); err != nil {
		return err
	}
	if s := d.t.text(i); string(s) != want {
		return attrErr(name, quote(s)+" is not "+strconv.Quote(want))
	}
	return nil
}

func isAttr(key []byte) bool {
	switch string(key) {
	case attrSpecVersion, attrID, attrSource, attrType, attrTime, attrSubject,
		attrDataContentType, attrSeq, attrDataSchema, attrData:
		return true
	}
	return false
}

// validID: ^[!-~]+$, at most 128 characters (so it fits a NATS header).
func validID(s []byte) bool {
	if len(s) == 0 || len(s) > 128 {
		return false
	}
	for _, c := range s {
		if c < '!' || c > '~' {
			return false
		}
	}
	return true
}

// validSource: ^[A-Za-z0-9_-]+(/[!-.0-~]+)*$, at most 256 characters.
func validSource(s []byte) bool {
	if len(s) > 256 {
		return false
	}
	i := 0
	for i < len(s) && isTokenChar(s[i]) {
		i++
	}
	if i == 0 {
		return false
	}
	for i < len(s) {
		if s[i] != '/' {
			return false
		}
		i++
		j := i
		for i < len(s) && s[i] >= '!' && s[i] <= '~' && s[i] != '/' {
			i++
		}
		if i == j {
			return false
		}
	}
	return true
}

func isTokenChar(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-'
}

// validExtName: ^[a-z0-9]{1,20}$.
func validExtName(s []byte) bool {
	if len(s) == 0 || len(s) > 20 {
		return false
	}
	for _, c := range s {
		if (c < 'a' || c > 'z') && (c < '0' || c > '9') {
			return false
		}
	}
	return true
}
