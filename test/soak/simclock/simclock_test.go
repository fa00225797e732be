package simclock

import (
	"context"
	"path/filepath"
	"testing"
	"time"
)

func TestSharedClock(t *testing.T) {
	path := filepath.Join(t.TempDir(), "clock")
	start := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	c, err := Create(path, start, 100)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	r, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if !c.Now().Equal(start) || !r.Now().Equal(start) {
		t.Fatalf("paused at creation: driver %s, reader %s, want %s", c.Now(), r.Now(), start)
	}
	if w := r.Wait(time.Second); w != PausedWaitFloor {
		t.Fatalf("paused Wait(1s) = %s, want the floor %s", w, PausedWaitFloor)
	}
	// Running at 100× up to a cap 30 simulated seconds on.
	limit := start.Add(30 * time.Second)
	c.Set(100, limit)
	if w := r.Wait(time.Second); w != 10*time.Millisecond {
		t.Fatalf("Wait(1s) at 100× = %s, want 10ms", w)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := c.WaitUntil(ctx, start.Add(10*time.Second)); err != nil {
		t.Fatal(err)
	}
	if now := r.Now(); now.Before(start.Add(10 * time.Second)) {
		t.Fatalf("woken at %s, before the instant", now)
	}
	// The cap stops the clock; a waiter at the cap is woken there.
	if err := c.WaitUntil(ctx, limit); err != nil {
		t.Fatal(err)
	}
	time.Sleep(50 * time.Millisecond)
	if !r.Now().Equal(limit) || !c.Now().Equal(limit) {
		t.Fatalf("at the cap: reader %s, driver %s, want %s", r.Now(), c.Now(), limit)
	}
	// Paused: time stands still and goes on from there.
	c.Set(0, time.Time{})
	before := r.Now()
	time.Sleep(20 * time.Millisecond)
	if !r.Now().Equal(before) {
		t.Fatalf("paused clock moved from %s to %s", before, r.Now())
	}
	c.Set(100, time.Time{})
	time.Sleep(20 * time.Millisecond)
	if d := r.Now().Sub(before); d < time.Second || d > time.Minute {
		t.Fatalf("resumed clock moved %s in 20 ms at 100×", d)
	}
	// A waiter whose context ends is removed.
	short, cancelShort := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancelShort()
	if err := c.WaitUntil(short, start.Add(1000*time.Hour)); err == nil {
		t.Fatal("WaitUntil returned before its instant")
	}
	if _, ok := c.Earliest(); ok {
		t.Fatal("a cancelled waiter is still waiting")
	}
}
