/*
Copyright 2026 Flant JSC

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

// Package backupplan holds the backup decisions that take and return data:
// the schedule (a 5-field cron), the names of scheduled StarrocksBackup
// objects, retention. The webhook (through pkg/classrules) and the hooks use
// the same functions, so admission and reconcile cannot disagree.
package backupplan

import (
	"fmt"
	"math/bits"
	"strconv"
	"strings"
	"time"
)

// Schedule is a parsed 5-field cron expression, evaluated in UTC. The parser
// is small on purpose (numbers, '*', ranges, steps, lists; no names, no
// macros): the expression is tenant input and must fail with a message
// naming the field, never with a panic or a loop without bound.
type Schedule struct {
	minute, hour, dom, month, dow uint64
	// domStar/dowStar: cron's rule that when both day fields are
	// restricted a day matches either of them.
	domStar, dowStar bool
}

var cronFields = []struct {
	name     string
	min, max int
}{
	{"minute", 0, 59},
	{"hour", 0, 23},
	{"day of month", 1, 31},
	{"month", 1, 12},
	{"day of week", 0, 7},
}

// MaxScheduleLength bounds the expression (as the CRD does).
const MaxScheduleLength = 128

// ParseSchedule parses "minute hour day-of-month month day-of-week".
func ParseSchedule(spec string) (*Schedule, error) {
	if len(spec) > MaxScheduleLength {
		return nil, fmt.Errorf("schedule is longer than %d characters", MaxScheduleLength)
	}
	fields := strings.Fields(spec)
	if len(fields) != 5 {
		return nil, fmt.Errorf("schedule %q has %d fields, want 5 (minute hour day-of-month month day-of-week), e.g. \"0 3 * * *\"", spec, len(fields))
	}
	var masks [5]uint64
	for i, f := range fields {
		m, err := parseField(f, cronFields[i].min, cronFields[i].max)
		if err != nil {
			return nil, fmt.Errorf("schedule %q, %s field %q: %w", spec, cronFields[i].name, f, err)
		}
		masks[i] = m
	}
	// Sunday is 0 and 7.
	if masks[4]&(1<<7) != 0 {
		masks[4] |= 1
		masks[4] &^= 1 << 7
	}
	return &Schedule{minute: masks[0], hour: masks[1], dom: masks[2], month: masks[3], dow: masks[4],
		domStar: fields[2] == "*", dowStar: fields[4] == "*"}, nil
}

func parseField(f string, lo, hi int) (uint64, error) {
	var mask uint64
	for _, part := range strings.Split(f, ",") {
		rng, stepText, hasStep := strings.Cut(part, "/")
		step := 1
		if hasStep {
			s, err := strconv.Atoi(stepText)
			if err != nil || s < 1 || s > hi {
				return 0, fmt.Errorf("step %q is not a number from 1 to %d", stepText, hi)
			}
			step = s
		}
		start, end := lo, hi
		switch {
		case rng == "*":
		case strings.Contains(rng, "-"):
			a, b, _ := strings.Cut(rng, "-")
			var err error
			if start, err = number(a, lo, hi); err != nil {
				return 0, err
			}
			if end, err = number(b, lo, hi); err != nil {
				return 0, err
			}
			if start > end {
				return 0, fmt.Errorf("range %q runs backwards", rng)
			}
		default:
			n, err := number(rng, lo, hi)
			if err != nil {
				return 0, err
			}
			start, end = n, n
			if hasStep {
				end = hi
			}
		}
		for v := start; v <= end; v += step {
			mask |= 1 << uint(v)
		}
	}
	return mask, nil
}

func number(s string, lo, hi int) (int, error) {
	n, err := strconv.Atoi(s)
	if err != nil || n < lo || n > hi || len(s) > 2 {
		return 0, fmt.Errorf("%q is not a number from %d to %d", s, lo, hi)
	}
	return n, nil
}

func (s *Schedule) dayMatches(t time.Time) bool {
	dom := s.dom&(1<<uint(t.Day())) != 0
	dow := s.dow&(1<<uint(t.Weekday())) != 0
	if s.domStar || s.dowStar {
		return dom && dow
	}
	return dom || dow
}

// Next is the first time strictly after t (UTC, whole minutes) the schedule
// fires, or the zero time when it never does within five years (e.g. 31
// February).
func (s *Schedule) Next(t time.Time) time.Time {
	t = t.UTC().Truncate(time.Minute).Add(time.Minute)
	limit := t.AddDate(5, 0, 0)
	for t.Before(limit) {
		if s.month&(1<<uint(t.Month())) == 0 {
			t = time.Date(t.Year(), t.Month()+1, 1, 0, 0, 0, 0, time.UTC)
			continue
		}
		if !s.dayMatches(t) {
			t = time.Date(t.Year(), t.Month(), t.Day()+1, 0, 0, 0, 0, time.UTC)
			continue
		}
		if s.hour&(1<<uint(t.Hour())) == 0 {
			t = t.Truncate(time.Hour).Add(time.Hour)
			continue
		}
		if s.minute&(1<<uint(t.Minute())) == 0 {
			t = t.Add(time.Minute)
			continue
		}
		return t
	}
	return time.Time{}
}

// Prev is the last time at or before t the schedule fired, looking back at
// most `within` (zero time when it did not fire then). The hooks use it to
// name the backup of the slot now due.
func (s *Schedule) Prev(t time.Time, within time.Duration) time.Time {
	// Walk forward from the start of the window: Next is cheap and the
	// window is short (the hooks pass a few intervals at most).
	from := t.UTC().Truncate(time.Minute).Add(-within - time.Minute)
	var last time.Time
	for n := s.Next(from); !n.IsZero() && !n.After(t); n = s.Next(n) {
		last = n
	}
	return last
}

// MinInterval is the shortest time between two firings, found by walking a
// year and a bit from a fixed start (every month and weekday combination
// occurs), stopping early once a gap shorter than floor is seen. Zero when
// the schedule never fires.
func (s *Schedule) MinInterval(floor time.Duration) time.Duration {
	// Fast path: two firings within the same hour.
	if bits.OnesCount64(s.minute) > 1 {
		first := bits.TrailingZeros64(s.minute)
		gap := 60
		prev := first
		for v := first + 1; v < 60; v++ {
			if s.minute&(1<<uint(v)) != 0 {
				gap = min(gap, v-prev)
				prev = v
			}
		}
		gap = min(gap, first+60-prev)
		if d := time.Duration(gap) * time.Minute; d < floor {
			return d
		}
	}
	// 2025 is not a leap year: February has its shortest length.
	start := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC).Add(-time.Minute)
	end := start.AddDate(1, 2, 0)
	var best time.Duration
	prev := s.Next(start)
	if prev.IsZero() {
		return 0
	}
	for n := s.Next(prev); !n.IsZero() && n.Before(end); n = s.Next(n) {
		if d := n.Sub(prev); best == 0 || d < best {
			best = d
			if best < floor {
				return best
			}
		}
		prev = n
	}
	if best == 0 {
		// Fires once a year or less often.
		best = 365 * 24 * time.Hour
	}
	return best
}
