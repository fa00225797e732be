package main

import (
	"math"
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

func TestParseSize(t *testing.T) {
	cases := []struct {
		in      string
		want    int64
		wantErr string
	}{
		{in: "64Mi", want: 64 << 20},
		{in: "1Gi", want: 1 << 30},
		{in: "1.5Gi", want: 3 << 29},
		{in: "0.5Ki", want: 512},
		{in: "500M", want: 500_000_000},
		{in: "1048576", want: 1 << 20},
		{in: " 8Ki ", want: 8 << 10},
		{in: "7Ei", want: 7 << 60},
		{in: "9223372036854775806", want: math.MaxInt64 - 1},
		{in: "", wantErr: `--working-set "": not a quantity`},
		{in: "lots", wantErr: `--working-set "lots": not a quantity`},
		{in: "64MB", wantErr: `--working-set "64MB": not a quantity`},
		{in: "0", wantErr: `--working-set "0": not positive`},
		{in: "-64Mi", wantErr: `--working-set "-64Mi": not positive`},
		{in: "0.5", wantErr: `--working-set "0.5": not a whole number of bytes`},
		{in: "100m", wantErr: `--working-set "100m": not a whole number of bytes`},
		{in: "1.0000001Ki", wantErr: "not a whole number of bytes"},
		{in: "8Ei", wantErr: `--working-set "8Ei": too large`},
		{in: "9223372036854775807", wantErr: "too large"},
		{in: "9223372036854775808", wantErr: "too large"},
		{in: "100000Ei", wantErr: "too large"},
		{in: "16Ei", wantErr: "too large"},
		{in: "1e30", wantErr: "too large"},
	}
	for _, c := range cases {
		t.Run(c.in, func(t *testing.T) {
			got, err := parseSize("--working-set", c.in)
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("parseSize(%q) = %d, %v; want an error with %q", c.in, got, err, c.wantErr)
				}
				if !strings.Contains(err.Error(), "like 64Mi") {
					t.Errorf("error %q does not say what is wanted", err)
				}
				return
			}
			if err != nil || got != c.want {
				t.Fatalf("parseSize(%q) = %d, %v; want %d", c.in, got, err, c.want)
			}
		})
	}
}
