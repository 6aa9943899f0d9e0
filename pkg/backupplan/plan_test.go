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

package backupplan

import (
	"slices"
	"strings"
	"testing"
	"time"
)

func utc(s string) time.Time {
	t, err := time.Parse("2006-01-02 15:04", s)
	if err != nil {
		panic(err)
	}
	return t
}

func TestScheduleNext(t *testing.T) {
	cases := []struct {
		spec, from, want string
	}{
		{"0 3 * * *", "2026-12-04 21:45", "2026-12-05 03:00"},
		{"0 3 * * *", "2026-12-05 03:00", "2026-12-06 03:00"},
		{"*/15 * * * *", "2026-12-04 21:45", "2026-12-04 22:00"},
		{"30 2 1 * *", "2026-12-04 21:45", "2027-01-01 02:30"},
		{"0 0 * * 0", "2026-12-04 21:45", "2026-12-06 00:00"}, // a Sunday
		{"0 0 * * 7", "2026-12-04 21:45", "2026-12-06 00:00"}, // 7 is Sunday too
		{"0 12 29 2 *", "2026-12-04 21:45", "2028-02-29 12:00"},
		// Both day fields restricted: either matches (cron's rule).
		{"0 0 1 * 1", "2026-12-04 21:45", "2026-12-07 00:00"},
		{"0 4-6/2 * * *", "2026-12-04 21:45", "2026-12-05 04:00"},
		{"5,10 * * * *", "2026-12-04 21:45", "2026-12-04 22:05"},
	}
	for _, tc := range cases {
		s, err := ParseSchedule(tc.spec)
		if err != nil {
			t.Fatalf("%q: %v", tc.spec, err)
		}
		if got := s.Next(utc(tc.from)); !got.Equal(utc(tc.want)) {
			t.Errorf("%q after %s: %s, want %s", tc.spec, tc.from, got, tc.want)
		}
	}
	never, _ := ParseSchedule("0 0 31 2 *")
	if got := never.Next(utc("2026-01-01 00:00")); !got.IsZero() {
		t.Errorf("31 February fired at %s", got)
	}
}

func TestParseScheduleRefusesWithTheField(t *testing.T) {
	cases := map[string]string{
		"0 3 * *":                              "has 4 fields",
		"0 0 3 * * *":                          "has 6 fields",
		"60 * * * *":                           "minute field",
		"0 24 * * *":                           "hour field",
		"0 0 0 * *":                            "day of month field",
		"0 0 * 13 *":                           "month field",
		"0 0 * * 8":                            "day of week field",
		"*/0 * * * *":                          "step",
		"5-1 * * * *":                          "runs backwards",
		"@daily":                               "has 1 fields",
		"0 0 * JAN *":                          "month field",
		"0 0 * * MON":                          "day of week field",
		"00000000001 * * * *":                  "minute field",
		strings.Repeat("1,", 80) + "1 * * * *": "longer than",
	}
	for spec, want := range cases {
		if _, err := ParseSchedule(spec); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseSchedule(%q) = %v, want an error with %q", spec, err, want)
		}
	}
}

func TestMinInterval(t *testing.T) {
	cases := []struct {
		spec string
		want time.Duration
	}{
		{"* * * * *", time.Minute},
		{"*/15 * * * *", 15 * time.Minute},
		{"0 * * * *", time.Hour},
		{"0 3 * * *", 24 * time.Hour},
		{"0 3,4 * * *", time.Hour},
		{"0 0 * * 0", 7 * 24 * time.Hour},
		{"0 0 1 * *", 28 * 24 * time.Hour},
		// The gap across midnight counts.
		{"0 23 * * *", 24 * time.Hour},
		{"50 23 * * *", 24 * time.Hour},
		{"0,50 23,0 * * *", 10 * time.Minute},
	}
	for _, tc := range cases {
		s, err := ParseSchedule(tc.spec)
		if err != nil {
			t.Fatalf("%q: %v", tc.spec, err)
		}
		if got := s.MinInterval(0); got != tc.want {
			t.Errorf("MinInterval(%q) = %s, want %s", tc.spec, got, tc.want)
		}
	}
	// With a floor it stops at the first gap below it.
	s, _ := ParseSchedule("*/5 * * * *")
	if got := s.MinInterval(time.Hour); got >= time.Hour {
		t.Errorf("MinInterval with a floor = %s, want below the floor", got)
	}
}

func TestPrev(t *testing.T) {
	s, _ := ParseSchedule("0 3 * * *")
	if got := s.Prev(utc("2026-12-05 03:20"), time.Hour); !got.Equal(utc("2026-12-05 03:00")) {
		t.Errorf("Prev = %s", got)
	}
	if got := s.Prev(utc("2026-12-05 05:00"), time.Hour); !got.IsZero() {
		t.Errorf("Prev outside the window = %s, want none", got)
	}
}

func TestScheduledNameIsDeterministic(t *testing.T) {
	slot := utc("2026-12-05 03:00")
	if a, b := ScheduledName("olap", slot), ScheduledName("olap", slot.Add(30*time.Second)); a != b || a != "olap-20261205-0300" {
		t.Errorf("ScheduledName = %q and %q", a, b)
	}
	if n := ScheduledName(strings.Repeat("a", 40), slot); len(n) > 63 {
		t.Errorf("ScheduledName of a 40-character instance is %d characters", len(n))
	}
}

func TestParseDuration(t *testing.T) {
	if d, err := ParseDuration("1h30m"); err != nil || d != 90*time.Minute {
		t.Errorf("ParseDuration(1h30m) = %s, %v", d, err)
	}
	for _, bad := range []string{"7d", "-1h", "1.5h", "", "0s", "999999999999h", "1h; rm"} {
		if _, err := ParseDuration(bad); err == nil {
			t.Errorf("ParseDuration(%q) accepted", bad)
		}
	}
}

func TestExpired(t *testing.T) {
	now := utc("2026-12-10 12:00")
	day := func(d int, completed, finished bool) Backup {
		return Backup{Name: "b" + string(rune('0'+d)), Created: now.Add(-time.Duration(d) * 24 * time.Hour), Completed: completed, Finished: finished}
	}
	all := []Backup{day(1, true, true), day(2, true, true), day(3, false, true), day(4, true, true), day(5, true, true)}
	cases := []struct {
		name    string
		backups []Backup
		r       Retention
		want    []string
	}{
		{"keeps the last 2", all, Retention{KeepLast: 2}, []string{"b5", "b4", "b3"}},
		{"keeps what is younger than 3 days and a half", all, Retention{KeepWithin: 84 * time.Hour}, []string{"b5", "b4"}},
		{"keeps by either rule", all, Retention{KeepLast: 4, KeepWithin: 36 * time.Hour}, []string{"b5"}},
		{"no rule keeps everything", all, Retention{}, nil},
		{"never deletes a running backup", []Backup{day(1, false, false), day(9, false, false)}, Retention{KeepLast: 1}, nil},
		{"keeps the newest Completed one after failures", []Backup{day(1, false, true), day(2, false, true), day(5, true, true)},
			Retention{KeepLast: 1}, []string{"b2"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := Expired(tc.backups, tc.r, now); !slices.Equal(got, tc.want) {
				t.Errorf("Expired = %v, want %v", got, tc.want)
			}
		})
	}
}
