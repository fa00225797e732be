package exchange

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"time"

	"k8s.io/client-go/rest"

	"github.com/storagebench/storagebench/internal/protocol"
)

// ClockOffset implements runner.Clock: it measures the runner's clock (Now)
// against the API server's, read from the HTTP Date header of GET /version
// (readable by every authenticated user). Date has a resolution of one
// second, so the runner polls until the server's second changes: the change
// lies between two requests, which bounds the offset to about the round-trip
// time. It takes at most about 2.5 s and 50 requests.
func (c *Client) ClockOffset(ctx context.Context) (offset, uncertainty time.Duration, err error) {
	rc, ok := c.Clientset.Discovery().RESTClient().(*rest.RESTClient)
	if !ok || rc == nil || rc.Client == nil {
		return 0, 0, errors.New("measuring the clock offset: no HTTP client for the API server")
	}
	url := rc.Get().AbsPath("/version").URL().String()
	now := c.Now
	if now == nil {
		now = time.Now
	}
	offset, uncertainty, err = measureClockOffset(ctx, now, dateProbe(rc.Client, url), defaultClockProbe)
	if err != nil {
		return 0, 0, fmt.Errorf("measuring the clock offset to the API server: %w", err)
	}
	return offset, uncertainty, nil
}

// dateProbe returns a function reading the Date header of a GET of url.
func dateProbe(hc *http.Client, url string) func(context.Context) (time.Time, error) {
	return func(ctx context.Context) (time.Time, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return time.Time{}, err
		}
		resp, err := hc.Do(req)
		if err != nil {
			return time.Time{}, err
		}
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
		_ = resp.Body.Close()
		date := resp.Header.Get("Date")
		if date == "" {
			return time.Time{}, fmt.Errorf("GET %s: no Date header", url)
		}
		return http.ParseTime(date)
	}
}

// clockSample is one request: the runner's clock when it was sent and when
// its answer arrived, and the server's Date (whole seconds).
type clockSample struct {
	sent, received, date time.Time
}

// offsetBounds returns the interval (lo, hi] holding every offset (runner
// minus server) consistent with all samples. The server stamped each answer
// at a runner instant t in [sent, received], when its clock, t - offset, was
// in [date, date+1s): so offset is in (sent-date-1s, received-date].
func offsetBounds(samples []clockSample) (lo, hi time.Duration) {
	lo, hi = math.MinInt64, math.MaxInt64
	for _, s := range samples {
		lo = max(lo, s.sent.Sub(s.date)-time.Second)
		hi = min(hi, s.received.Sub(s.date))
	}
	return lo, hi
}

// estimateOffset returns the middle of the offsets consistent with every
// sample and half their spread.
func estimateOffset(samples []clockSample) (offset, uncertainty time.Duration, err error) {
	if len(samples) == 0 {
		return 0, 0, errors.New("no answer from the API server")
	}
	lo, hi := offsetBounds(samples)
	if lo >= hi {
		return 0, 0, fmt.Errorf("the API server's Date headers contradict each other over %d requests (did its clock jump?)", len(samples))
	}
	half := (hi - lo + 1) / 2
	return lo + half, half, nil
}

// clockProbe bounds a measurement.
type clockProbe struct {
	requests int           // at most this many requests
	duration time.Duration // none sent later than this after the first
	perRound int           // requests spread over one second boundary's window
	minGap   time.Duration // the smallest spacing of requests in a window
	goal     time.Duration // stop once the uncertainty is this small
}

var defaultClockProbe = clockProbe{requests: 50, duration: 2500 * time.Millisecond, perRound: 20, minGap: time.Millisecond, goal: time.Millisecond}

// measureClockOffset polls probe for the server's Date. After the first
// answer the next change of the server's second is known to fall in a window
// of about a second; requests sweep that window perRound apart until the
// second changes, which narrows the window to one spacing; the following
// second's boundary is then swept again with a finer spacing, until the
// goal or a bound is reached. A failed request ends the measurement (with
// the estimate so far, if any).
func measureClockOffset(ctx context.Context, now func() time.Time, probe func(context.Context) (time.Time, error), p clockProbe) (offset, uncertainty time.Duration, err error) {
	ctx, cancel := context.WithTimeout(ctx, p.duration+2*time.Second)
	defer cancel()
	var samples []clockSample
	var boundary time.Time // the server second the current sweep looks for
	var gap time.Duration
	for len(samples) < p.requests {
		if len(samples) > 0 {
			lo, hi := offsetBounds(samples)
			if lo >= hi || (hi-lo)/2 <= p.goal {
				break
			}
			// The first server second not yet seen to begin: its start
			// is, on the runner's clock, in (next+lo, next+hi].
			next := now().Add(-hi).Truncate(time.Second).Add(time.Second)
			if !next.Equal(boundary) {
				boundary, gap = next, max((hi-lo)/time.Duration(p.perRound), p.minGap)
			}
			at := next.Add(lo + gap)
			if at.Sub(samples[0].sent) > p.duration {
				break
			}
			if err := protocol.Pause(ctx, at.Sub(now())); err != nil {
				break
			}
		}
		sent := now()
		date, err := probe(ctx)
		received := now()
		if err != nil {
			if len(samples) == 0 {
				return 0, 0, err
			}
			break
		}
		samples = append(samples, clockSample{sent: sent, received: received, date: date})
	}
	return estimateOffset(samples)
}
