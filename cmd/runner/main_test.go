package main

import (
	"strings"
	"testing"
	"time"

	"github.com/storagebench/storagebench/internal/exchange"
)

func TestClientClockTestHook(t *testing.T) {
	cases := []struct {
		env     string
		shift   time.Duration
		wantErr string
	}{
		{"", 0, ""},
		{"2s", 2 * time.Second, ""},
		{"-1.5s", -1500 * time.Millisecond, ""},
		{"soon", 0, exchange.EnvTestClockOffset + `="soon" (a test hook) is not a duration`},
	}
	for _, c := range cases {
		t.Run(c.env, func(t *testing.T) {
			t.Setenv(exchange.EnvTestClockOffset, c.env)
			now, err := clientClock()
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("got %v, want %q", err, c.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if d := time.Until(now()) - c.shift; d.Abs() > 100*time.Millisecond {
				t.Fatalf("clock off by %s from the wanted shift %s", d, c.shift)
			}
		})
	}
}
