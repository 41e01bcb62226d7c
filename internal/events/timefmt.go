package events

import "time"

// parseDateTime reads the time attribute as the schema checks it, and
// returns the instant in UTC. The schema's pattern fixes the shape
// (yyyy-mm-ddThh:mm:ss[.frac](Z|±hh:mm), 'T' and 'Z' in either case); its
// "date-time" format, as santhosh-tekuri/jsonschema v6 checks it, adds:
//
//   - real calendar dates (time.Parse), years 0000-9999;
//   - hour <= 23, minute <= 59, second <= 60, offset hour <= 23, minute <= 59;
//   - second 60 only where it falls on 23:59 UTC. time.Time has no leap
//     seconds, so 23:59:60 becomes 00:00:00 of the next day.
//
// Fraction digits beyond the nanosecond are dropped.
func parseDateTime(s []byte) (time.Time, bool) {
	if len(s) < 20 || s[10] != 'T' && s[10] != 't' {
		return time.Time{}, false
	}
	// Date.
	for _, j := range [...]int{0, 1, 2, 3, 5, 6, 8, 9} {
		if s[j] < '0' || s[j] > '9' {
			return time.Time{}, false
		}
	}
	if s[4] != '-' || s[7] != '-' {
		return time.Time{}, false
	}
	year := int(s[0]-'0')*1000 + int(s[1]-'0')*100 + int(s[2]-'0')*10 + int(s[3]-'0')
	month := int(s[5]-'0')*10 + int(s[6]-'0')
	day := int(s[8]-'0')*10 + int(s[9]-'0')
	if month < 1 || month > 12 || day < 1 || day > daysIn(month, year) {
		return time.Time{}, false
	}

	// Time.
	t := s[11:]
	if len(t) < 9 || t[2] != ':' || t[5] != ':' {
		return time.Time{}, false
	}
	h, ok1 := atoi2(t[0], t[1])
	m, ok2 := atoi2(t[3], t[4])
	sec, ok3 := atoi2(t[6], t[7])
	if !ok1 || !ok2 || !ok3 || h > 23 || m > 59 || sec > 60 {
		return time.Time{}, false
	}
	t = t[8:]
	nsec := 0
	if len(t) > 0 && t[0] == '.' {
		j := 1
		for j < len(t) && t[j] >= '0' && t[j] <= '9' {
			if j <= 9 {
				nsec = nsec*10 + int(t[j]-'0')
			}
			j++
		}
		if j == 1 {
			return time.Time{}, false
		}
		for k := j; k <= 9; k++ {
			nsec *= 10
		}
		t = t[j:]
	}
	offset := 0 // seconds east of UTC
	if len(t) != 1 || t[0] != 'Z' && t[0] != 'z' {
		if len(t) != 6 || t[0] != '+' && t[0] != '-' || t[3] != ':' {
			return time.Time{}, false
		}
		zh, ok1 := atoi2(t[1], t[2])
		zm, ok2 := atoi2(t[4], t[5])
		if !ok1 || !ok2 || zh > 23 || zm > 59 {
			return time.Time{}, false
		}
		offset = zh*3600 + zm*60
		if t[0] == '-' {
			offset = -offset
		}
	}
	if sec == 60 {
		// Leap second: only at 23:59 UTC. Like the validator, shift the
		// local time by the offset and wrap below zero only.
		hm := h*60 + m - offset/60
		if hm < 0 {
			hm += 24 * 60
		}
		if hm/60 != 23 || hm%60 != 59 {
			return time.Time{}, false
		}
	}
	at := time.Date(year, time.Month(month), day, h, m, sec, nsec, time.UTC)
	if offset != 0 {
		at = at.Add(-time.Duration(offset) * time.Second)
	}
	return at, true
}

// InYearRange says whether t, in UTC, falls in years 0001 to 9999: the
// instants every consumer of an event can write as RFC 3339 and as a SQL
// date. The schema's date-time format accepts local times whose UTC instant
// is outside (0000-01-01T00:00:00+23:59 is in year 0 UTC, BC in SQL;
// 9999-12-31T23:59:59-23:59 is in year 10000); Decode rejects them.
func InYearRange(t time.Time) bool {
	y := t.UTC().Year()
	return y >= 1 && y <= 9999
}

// atoi2 reads two decimal digits.
func atoi2(a, b byte) (int, bool) {
	if a < '0' || a > '9' || b < '0' || b > '9' {
		return 0, false
	}
	return int(a-'0')*10 + int(b-'0'), true
}

func daysIn(month, year int) int {
	switch month {
	case 2:
		if year%4 == 0 && (year%100 != 0 || year%400 == 0) {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	}
	return 31
}
