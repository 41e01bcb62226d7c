package events

import "strconv"

// Payload returns the typed data of e: *SessionStartedData for
// SessionStarted, *PlanCreatedData for PlanCreated, and so on. It checks the
// data against the schema of e.Type first, so it also works on an Event that
// did not come from Decode; the error is then an *Error as from Decode.
//
// An event from Decode carries its typed data, read from the tree Decode
// parsed: Payload returns it without parsing the data again, as long as
// e.Type and e.Data are the ones Decode set (bytes of Data changed in place
// are not noticed). The value is then shared by every Payload call on e and
// on its copies: treat it as read-only.
func (e *Event) Payload() (any, error) {
	td, err := e.typedData()
	if err != nil {
		return nil, err
	}
	return td.value, nil
}

// Has reports whether the data of e has the member name: an optional member
// may be absent, and a string member that is present may be empty, which
// the typed data (Payload) does not tell apart. False when the data does not
// pass the schema of e.Type. Like Payload, it reads what Decode kept; on
// another event it reads the data, each call (PayloadMembers reads it once
// for both).
func (e *Event) Has(member string) bool {
	_, m, err := e.PayloadMembers()
	return err == nil && m.Has(member)
}

// PayloadMembers is Payload that also returns which members the data has.
func (e *Event) PayloadMembers() (any, Members, error) {
	td, err := e.typedData()
	if err != nil {
		return nil, Members{}, err
	}
	return td.value, Members{spec: dataSpecs[td.typ], set: td.members}, nil
}

// Members is the set of members of an event's data (PayloadMembers).
type Members struct {
	spec *objSpec
	set  uint32 // bit i: spec.fields[i]
}

// Has reports whether the data has the member name.
func (m Members) Has(name string) bool {
	if m.spec == nil {
		return false
	}
	i := m.spec.index(name)
	return i >= 0 && m.set&(1<<i) != 0
}

// goData is the data of an event read into Go: the value Payload returns
// and the members present, bit i for field i of the type's objSpec.
type goData struct {
	typ     Type
	data    []byte // the Data it was read from
	value   any
	members uint32
}

// typedData returns what Decode kept of e's data while it still describes
// e, and reads the data again otherwise.
func (e *Event) typedData() (*goData, error) {
	if c := e.cache; c != nil && c.typ == e.Type && sameSlice(c.data, e.Data) {
		return c, nil
	}
	spec, ok := dataSpecs[e.Type]
	if !ok {
		return nil, &Error{Reason: ReasonUnknownType, Path: "/type", Msg: quote([]byte(e.Type)) + " is not a v1 event type"}
	}
	d := decoders.Get().(*decoder)
	defer d.release()
	t := &d.t
	if err := t.parse(e.Data); err != nil {
		err.Path = "/data"
		return nil, err
	}
	d.v.reset(t)
	d.v.path = append(d.v.path, seg{name: attrData})
	if err := d.v.object(0, spec); err != nil {
		return nil, err
	}
	return readTyped(t, 0, e.Type, e.Data), nil
}

// sameSlice says whether a and b are the same bytes in memory.
func sameSlice(a, b []byte) bool {
	return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0])
}

// readTyped reads the validated data object at node root of t, of type typ,
// into its typed value; data is the Data of the event it describes.
func readTyped(t *tree, root int32, typ Type, data []byte) *goData {
	b := builder{t: t, root: root}
	td := &goData{typ: typ, data: data}
	spec := dataSpecs[typ]
	b.members(root, func(key []byte, _ int32) {
		if i := spec.lookup(key); i >= 0 {
			td.members |= 1 << i
		}
	})
	switch typ {
	case SessionStarted:
		td.value = b.sessionStarted()
	case PlanCreated:
		td.value = b.planCreated()
	case HintStripped:
		td.value = b.hintStripped()
	case PlanUpdated:
		td.value = b.planUpdated()
	case ToolCalled:
		td.value = b.toolCalled()
	case TaskCompleted:
		td.value = b.taskCompleted()
	case DepthLimitReached:
		td.value = b.depthLimitReached()
	case ModelCalled:
		td.value = b.modelCalled()
	default: // SessionEnded
		td.value = b.sessionEnded()
	}
	return td
}

// builder reads a validated data tree into the typed structs; root is the
// node of the data object.
type builder struct {
	t    *tree
	root int32
}

// members calls f with the key and value node of each member of object i.
func (b builder) members(i int32, f func(key []byte, v int32)) {
	t := b.t
	k := i + 1
	for m := int32(0); m < t.nodes[i].n; m++ {
		f(t.text(k), k+1)
		k = t.nodes[k+1].next
	}
}

// elems calls f with the node of each element of array i.
func (b builder) elems(i int32, f func(v int32)) {
	t := b.t
	e := i + 1
	for j := int32(0); j < t.nodes[i].n; j++ {
		f(e)
		e = t.nodes[e].next
	}
}

func (b builder) str(i int32) string { return string(b.t.text(i)) }

func (b builder) int(i int32) int64 {
	v, _, _ := classifyInt(b.t.raw(i))
	return v
}

func (b builder) bool(i int32) bool { return b.t.nodes[i].kind == kTrue }

func (b builder) strPtr(i int32) *string {
	if b.t.nodes[i].kind == kNull {
		return nil
	}
	s := b.str(i)
	return &s
}

func (b builder) intPtr(i int32) *int64 {
	if b.t.nodes[i].kind == kNull {
		return nil
	}
	v := b.int(i)
	return &v
}

func (b builder) strs(i int32) []string {
	out := make([]string, 0, b.t.nodes[i].n)
	b.elems(i, func(v int32) { out = append(out, b.str(v)) })
	return out
}

func (b builder) ints(i int32) []int64 {
	out := make([]int64, 0, b.t.nodes[i].n)
	b.elems(i, func(v int32) { out = append(out, b.int(v)) })
	return out
}

func (b builder) tasks(i int32) []Task {
	out := make([]Task, 0, b.t.nodes[i].n)
	b.elems(i, func(v int32) {
		var task Task
		b.members(v, func(key []byte, v int32) {
			switch string(key) {
			case "id":
				task.ID = b.int(v)
			case "description":
				task.Description = b.str(v)
			case "tool_hint":
				task.ToolHint = b.strPtr(v)
			case "completed":
				task.Completed = b.bool(v)
			case "task_type":
				task.TaskType = b.str(v)
			}
		})
		out = append(out, task)
	})
	return out
}

func (b builder) sessionStarted() *SessionStartedData {
	d := new(SessionStartedData)
	b.members(b.root, func(key []byte, v int32) {
		switch string(key) {
		case "goal":
			d.Goal = b.str(v)
		case "agent":
			d.Agent = b.str(v)
		case "agent_version":
			d.AgentVersion = b.str(v)
		case "model":
			d.Model = b.str(v)
		case "tools":
			d.Tools = b.strs(v)
		case "task_type":
			d.TaskType = b.str(v)
		case "ruleset":
			d.Ruleset = b.str(v)
		case "rules":
			d.Rules = b.strs(v)
		case "assignment":
			d.Assignment = b.assignment(v)
		}
	})
	return d
}

func (b builder) assignment(i int32) *Assignment {
	a := new(Assignment)
	b.members(i, func(key []byte, v int32) {
		switch string(key) {
		case "ruleset":
			a.Ruleset = b.str(v)
		case "arm":
			a.Arm = Arm(b.str(v))
		case "holdout":
			a.Holdout, _ = strconv.ParseFloat(string(b.t.raw(v)), 64)
		case "unit":
			a.Unit = Unit(b.str(v))
		case "unit_id":
			a.UnitID = b.str(v)
		case "rules":
			b.elems(v, func(e int32) {
				var r RuleArm
				b.members(e, func(key []byte, v int32) {
					switch string(key) {
					case "id":
						r.ID = b.str(v)
					case "arm":
						r.Arm = Arm(b.str(v))
					case "holdout":
						r.Holdout, _ = strconv.ParseFloat(string(b.t.raw(v)), 64)
					}
				})
				a.Rules = append(a.Rules, r)
			})
		}
	})
	return a
}

func (b builder) planCreated() *PlanCreatedData {
	d := new(PlanCreatedData)
	b.members(b.root, func(key []byte, v int32) {
		switch string(key) {
		case "tasks":
			d.Tasks = b.tasks(v)
		case "origin":
			d.Origin = Origin(b.str(v))
		case "parse_error":
			d.ParseError = b.str(v)
		}
	})
	return d
}

func (b builder) hintStripped() *HintStrippedData {
	d := new(HintStrippedData)
	b.members(b.root, func(key []byte, v int32) {
		switch string(key) {
		case "task_id":
			d.TaskID = b.int(v)
		case "tool_hint":
			d.ToolHint = b.str(v)
		case "phase":
			d.Phase = Phase(b.str(v))
		case "reason":
			d.Reason = StripReason(b.str(v))
		case "rule_id":
			d.RuleID = b.str(v)
		}
	})
	return d
}

func (b builder) planUpdated() *PlanUpdatedData {
	d := new(PlanUpdatedData)
	b.members(b.root, func(key []byte, v int32) {
		switch string(key) {
		case "replan":
			d.Replan = b.int(v)
		case "trigger":
			d.Trigger = Trigger(b.str(v))
		case "reason":
			d.Reason = b.str(v)
		case "tasks":
			d.Tasks = b.tasks(v)
		case "kept":
			d.Kept = b.ints(v)
		case "dropped":
			d.Dropped = b.tasks(v)
		case "over_cap":
			d.OverCap = b.bool(v)
		case "valid":
			d.Valid = b.bool(v)
		case "error":
			d.Error = b.str(v)
		}
	})
	return d
}

func (b builder) toolCalled() *ToolCalledData {
	d := new(ToolCalledData)
	b.members(b.root, func(key []byte, v int32) {
		switch string(key) {
		case "task_id":
			d.TaskID = b.intPtr(v)
		case "tool":
			d.Tool = b.str(v)
		case "hint":
			d.Hint = b.strPtr(v)
		case "ok":
			d.OK = b.bool(v)
		case "error_kind":
			d.ErrorKind = b.str(v)
		case "error":
			d.Error = b.str(v)
		case "duration_ms":
			d.DurationMS = b.int(v)
		case "control":
			d.Control = b.bool(v)
		case "args_digest":
			d.ArgsDigest = b.str(v)
		}
	})
	return d
}

func (b builder) modelCalled() *ModelCalledData {
	d := new(ModelCalledData)
	b.members(b.root, func(key []byte, v int32) {
		switch string(key) {
		case "task_id":
			d.TaskID = b.intPtr(v)
		case "model":
			d.Model = b.str(v)
		case "input_tokens":
			d.InputTokens = b.intPtr(v)
		case "output_tokens":
			d.OutputTokens = b.intPtr(v)
		case "cached_input_tokens":
			d.CachedInputTokens = b.intPtr(v)
		case "duration_ms":
			d.DurationMS = b.int(v)
		}
	})
	return d
}

func (b builder) taskCompleted() *TaskCompletedData {
	d := new(TaskCompletedData)
	b.members(b.root, func(key []byte, v int32) {
		switch string(key) {
		case "task_id":
			d.TaskID = b.int(v)
		case "completion":
			d.Completion = Completion(b.str(v))
		case "reported":
			d.Reported = Completion(b.str(v))
		case "tool_calls":
			d.ToolCalls = b.int(v)
		case "summary":
			d.Summary = b.str(v)
		}
	})
	return d
}

func (b builder) depthLimitReached() *DepthLimitReachedData {
	d := new(DepthLimitReachedData)
	b.members(b.root, func(key []byte, v int32) {
		switch string(key) {
		case "task_id":
			d.TaskID = b.int(v)
		case "tool_calls":
			d.ToolCalls = b.int(v)
		case "limit":
			d.Limit = b.int(v)
		}
	})
	return d
}

func (b builder) sessionEnded() *SessionEndedData {
	d := new(SessionEndedData)
	b.members(b.root, func(key []byte, v int32) {
		switch string(key) {
		case "outcome":
			d.Outcome = Outcome(b.str(v))
		case "replans":
			d.Replans = b.int(v)
		case "tool_calls":
			d.ToolCalls = b.int(v)
		case "failed_tool_calls":
			d.FailedToolCalls = b.int(v)
		case "iterations":
			d.Iterations = b.int(v)
		case "duration_ms":
			d.DurationMS = b.int(v)
		case "feedback":
			d.Feedback = Feedback(b.str(v))
		case "usage":
			d.Usage = b.usage(v)
		}
	})
	return d
}

func (b builder) usage(i int32) *Usage {
	u := new(Usage)
	b.members(i, func(key []byte, v int32) {
		switch string(key) {
		case "model_calls":
			u.ModelCalls = b.int(v)
		case "input_tokens":
			u.InputTokens = b.intPtr(v)
		case "output_tokens":
			u.OutputTokens = b.intPtr(v)
		case "cached_input_tokens":
			u.CachedInputTokens = b.intPtr(v)
		case "model_ms":
			u.ModelMS = b.int(v)
		}
	})
	return u
}
