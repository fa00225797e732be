package controllers

import (
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/storagebench/storagebench/api/v1alpha1"
	"github.com/storagebench/storagebench/internal/protocol"
)

// clockWarning is the offset above which ClockSkew turns True: well-kept
// clocks (NTP, chrony) stay within milliseconds, so 100 ms says a node's
// clock is not kept, and its fio timestamps do not line up with the others'.
const clockWarning = 100 * time.Millisecond

// clockStatus summarises the ready reports' clock offsets.
func clockStatus(reports []protocol.Ready) *v1alpha1.ClockStatus {
	if len(reports) == 0 {
		return nil
	}
	s := &v1alpha1.ClockStatus{}
	var lo, hi time.Duration
	first := true
	for _, r := range reports {
		if r.ClockOffsetError != "" {
			s.Unmeasured++
			continue
		}
		off := r.ClockOffset
		if first || off < lo {
			lo = off
		}
		if first || off > hi {
			hi = off
		}
		first = false
		s.MaxOffset.Duration = max(s.MaxOffset.Duration, off.Abs())
		s.Uncertainty.Duration = max(s.Uncertainty.Duration, r.ClockOffsetUncertainty)
	}
	s.Spread.Duration = hi - lo
	return s
}

// setClockCondition reports the clock offsets as ClockSkew, judged at
// (when every client had reported ready).
func setClockCondition(b *v1alpha1.StorageBenchmark, at time.Time) {
	c := b.Status.Clock
	if c == nil {
		return
	}
	if c.MaxOffset.Duration > clockWarning {
		setCondition(b, v1alpha1.ConditionClockSkew, true, ReasonClockSkew, at, fmt.Sprintf(
			"a client's clock is %s from the API server's (spread %s, above %s): runners correct for it, but check the nodes' time synchronisation",
			c.MaxOffset.Duration, c.Spread.Duration, clockWarning))
		return
	}
	if c.Unmeasured > 0 {
		// A clock that could not be measured cannot be said to agree: the
		// start times it reported may be off by anything.
		msg := fmt.Sprintf("%d of %d clients could not measure their clock's offset from the API server's", c.Unmeasured, b.Status.ClientsTotal)
		if c.Unmeasured < b.Status.ClientsTotal {
			msg += fmt.Sprintf("; the others are within %s", c.MaxOffset.Duration)
		}
		setConditionStatus(b, v1alpha1.ConditionClockSkew, metav1.ConditionUnknown, ReasonClocksNotMeasured, at,
			msg+": their start times cannot be checked against the others' (the runners' ready reports say why)")
		return
	}
	setCondition(b, v1alpha1.ConditionClockSkew, false, ReasonClocksAgree, at,
		fmt.Sprintf("clients' clocks are within %s of the API server's", c.MaxOffset.Duration))
}
