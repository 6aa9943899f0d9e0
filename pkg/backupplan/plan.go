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
	"fmt"
	"regexp"
	"sort"
	"time"
)

// Labels the module puts on the StarrocksBackup objects it creates on
// schedule. They only select: the module never trusts them for anything
// that could touch another instance (a tenant can label any object), it
// matches spec.instanceName and the object's namespace.
const (
	// LabelInstance is the instance name.
	LabelInstance = "managed-services.deckhouse.io/starrocks-instance"
	// LabelScheduled marks a backup created by the schedule: only those
	// are subject to retention; backups created by hand are kept until
	// deleted.
	LabelScheduled = "managed-services.deckhouse.io/starrocks-scheduled"
)

// ScheduledName is the name of the backup of instance for the scheduled
// time slot: the same on every run for the same slot, so a create that
// raced or was repeated finds the object already there (AlreadyExists is
// success), and a backup is never started twice for one slot. The instance
// name has at most 40 characters, so the name fits an object name.
func ScheduledName(instance string, slot time.Time) string {
	return instance + "-" + slot.UTC().Format("20060102-1504")
}

var durationRE = regexp.MustCompile(`^([0-9]+(h|m|s))+$`)

// ParseDuration parses the CRD's duration form (hours, minutes, seconds:
// `168h`, `1h30m`) and refuses anything else with a message naming the
// form; the value is bounded so arithmetic cannot overflow.
func ParseDuration(s string) (time.Duration, error) {
	if !durationRE.MatchString(s) || len(s) > 32 {
		return 0, fmt.Errorf("%q is not a duration of hours, minutes and seconds, e.g. 168h or 1h30m", s)
	}
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 || d > 100*365*24*time.Hour {
		return 0, fmt.Errorf("%q is not a duration from 1s to 100 years", s)
	}
	return d, nil
}

// Backup is what retention needs to know of one scheduled backup.
type Backup struct {
	Name string
	// Created is the scheduled slot (or the creation time).
	Created time.Time
	// Completed: phase Completed.
	Completed bool
	// Finished: phase Completed, PartiallyFailed or Failed (not running).
	Finished bool
}

// Retention is spec.backup.retention, parsed. Zero fields keep nothing by
// that rule.
type Retention struct {
	KeepLast   int
	KeepWithin time.Duration
}

// Expired returns the names of the backups retention no longer keeps,
// oldest first. A backup is kept when it is among the KeepLast newest, or
// younger than KeepWithin, or still running, or the newest Completed one
// (so a run of failures never deletes the last good backup). With neither
// rule set nothing expires.
func Expired(backups []Backup, r Retention, now time.Time) []string {
	if r.KeepLast <= 0 && r.KeepWithin <= 0 {
		return nil
	}
	sorted := append([]Backup(nil), backups...)
	sort.SliceStable(sorted, func(i, j int) bool {
		if !sorted[i].Created.Equal(sorted[j].Created) {
			return sorted[i].Created.After(sorted[j].Created)
		}
		return sorted[i].Name > sorted[j].Name
	})
	newestCompleted := -1
	for i, b := range sorted {
		if b.Completed {
			newestCompleted = i
			break
		}
	}
	var out []string
	for i, b := range sorted {
		keep := !b.Finished || i == newestCompleted ||
			(r.KeepLast > 0 && i < r.KeepLast) ||
			(r.KeepWithin > 0 && now.Sub(b.Created) < r.KeepWithin)
		if !keep {
			out = append(out, b.Name)
		}
	}
	// Oldest first: when the module names only a few deletions per run,
	// the oldest go first.
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return out
}
