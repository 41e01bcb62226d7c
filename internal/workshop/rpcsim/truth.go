package rpcsim

// Truth is what a simulated stream holds, in the terms of analyze replans
// and analyze hints. Plain answers are not sessions (the bridge does not
// make them sessions).
type Truth struct {
	Sessions          int64
	PlainAnswers      int64
	Successes         int64
	FirstTrySuccesses int64 // success without any replan attempt
	Replanned         int64 // sessions with a valid replan
	ValidReplans      int64
	InvalidReplans    int64
	OverCapSessions   int64
	// Buckets: sessions and successes by valid replans 0, 1, 2, 3+.
	BucketSessions, BucketSuccesses [4]int64
	Triggers                        map[string]int64 // attempts per trigger

	StrippedHints int64
	Stripped      map[string]int64 // per hint
	// Calls and Failed per hint of the current task ("" for none): the
	// real calls SkillLite ran (skipped ones are not calls; complete_task and
	// update_task_plan are control calls, not counted here).
	Calls, Failed map[string]int64
	ToolCalls     int64
	FailedCalls   int64

	// DepthLimits: times a task reached the depth limit. Skipped: calls
	// SkillLite skipped. Suppressed: calls it ran whose result it did not
	// emit. Refused: complete_task success refused.
	DepthLimits, Skipped, Suppressed, Refused int64
}

func newTruth() Truth {
	return Truth{Triggers: map[string]int64{}, Stripped: map[string]int64{}, Calls: map[string]int64{}, Failed: map[string]int64{}}
}

// turnTruth is one turn's share.
type turnTruth struct {
	outcome                 string
	valid, invalid, overCap int64
	triggers                map[string]int64
	strips                  map[string]int64
	calls, failed           map[string]int64
	depthLimits             int64
	skipped, suppressed     int64
	refused                 int64
}

func (t *turnTruth) attempt(valid bool, trigger string, overCap bool) {
	if valid {
		t.valid++
	} else {
		t.invalid++
	}
	if overCap {
		t.overCap++
	}
	if t.triggers == nil {
		t.triggers = map[string]int64{}
	}
	t.triggers[trigger]++
}

func (t *turnTruth) stripped(hint string) {
	if t.strips == nil {
		t.strips = map[string]int64{}
	}
	t.strips[hint]++
}

func (t *turnTruth) call(hint *string, ok bool) {
	if t.calls == nil {
		t.calls, t.failed = map[string]int64{}, map[string]int64{}
	}
	h := ""
	if hint != nil {
		h = *hint
	}
	t.calls[h]++
	if !ok {
		t.failed[h]++
	}
}

func (tt *Truth) add(t *turnTruth) {
	tt.Sessions++
	success := t.outcome == "success"
	if success {
		tt.Successes++
		if t.valid+t.invalid == 0 {
			tt.FirstTrySuccesses++
		}
	}
	if t.valid > 0 {
		tt.Replanned++
	}
	tt.ValidReplans += t.valid
	tt.InvalidReplans += t.invalid
	if t.overCap > 0 {
		tt.OverCapSessions++
	}
	b := min(t.valid, 3)
	tt.BucketSessions[b]++
	if success {
		tt.BucketSuccesses[b]++
	}
	for k, v := range t.triggers {
		tt.Triggers[k] += v
	}
	for k, v := range t.strips {
		tt.Stripped[k] += v
		tt.StrippedHints += v
	}
	for k, v := range t.calls {
		tt.Calls[k] += v
		tt.ToolCalls += v
	}
	for k, v := range t.failed {
		tt.Failed[k] += v
		tt.FailedCalls += v
	}
	tt.DepthLimits += t.depthLimits
	tt.Skipped += t.skipped
	tt.Suppressed += t.suppressed
	tt.Refused += t.refused
}
