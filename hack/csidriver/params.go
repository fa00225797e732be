package main

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// paramPrefix marks the StorageClass parameters that command the driver's
// behaviour, the test bed's ground truth:
//
//	storagebench.test/delay-<op>: a Go duration the operation takes
//	storagebench.test/serial:     "true": operations of one kind run one at a time
//	storagebench.test/medium:     where the volume's data lives: "disk" (the
//	                              default, the driver's root) or "memory" (a
//	                              tmpfs of its own, memory.go)
//
// where <op> is create (CreateVolume without a source), clone (CreateVolume
// from a snapshot or a volume), delete (DeleteVolume), snapshot
// (CreateSnapshot), expand (ControllerExpandVolume) or publish
// (NodePublishVolume). CreateVolume reads them from its request and keeps
// them in the volume's record; the operations on an existing volume read them
// from there.
const paramPrefix = "storagebench.test/"

// opKind is a kind of operation that parameters can slow down.
type opKind string

const (
	opCreate   opKind = "create"
	opClone    opKind = "clone"
	opDelete   opKind = "delete"
	opSnapshot opKind = "snapshot"
	opExpand   opKind = "expand"
	opPublish  opKind = "publish"
)

var opKinds = []opKind{opCreate, opClone, opDelete, opSnapshot, opExpand, opPublish}

// The media a volume's data can live on.
const (
	mediumDisk   = "disk"
	mediumMemory = "memory"
)

// behaviour is what a volume's parameters command.
type behaviour struct {
	delay  map[opKind]time.Duration
	serial bool
	memory bool // storagebench.test/medium: memory
}

// parseBehaviour reads the storagebench.test/ parameters; others pass
// through. An unknown storagebench.test/ key or a bad value is an error
// naming the key.
func parseBehaviour(params map[string]string) (behaviour, error) {
	b := behaviour{delay: map[opKind]time.Duration{}}
	for _, key := range slices.Sorted(maps.Keys(params)) {
		name, ok := strings.CutPrefix(key, paramPrefix)
		if !ok {
			continue
		}
		value := params[key]
		if name == "serial" {
			v, err := strconv.ParseBool(value)
			if err != nil {
				return b, fmt.Errorf("parameter %s: %q is not a boolean", key, value)
			}
			b.serial = v
			continue
		}
		if name == "medium" {
			if value != mediumDisk && value != mediumMemory {
				return b, fmt.Errorf("parameter %s: %q is neither %q nor %q", key, value, mediumDisk, mediumMemory)
			}
			b.memory = value == mediumMemory
			continue
		}
		kind, ok := strings.CutPrefix(name, "delay-")
		if !ok || !slices.Contains(opKinds, opKind(kind)) {
			return b, fmt.Errorf("unknown parameter %s", key)
		}
		d, err := time.ParseDuration(value)
		if err != nil || d < 0 {
			return b, fmt.Errorf("parameter %s: %q is not a non-negative duration", key, value)
		}
		b.delay[opKind(kind)] = d
	}
	return b, nil
}

// pacer makes operations take the time their volume commands.
type pacer struct {
	turns map[opKind]chan struct{} // one token per kind, for serial volumes
}

func newPacer() *pacer {
	p := &pacer{turns: map[opKind]chan struct{}{}}
	for _, k := range opKinds {
		p.turns[k] = make(chan struct{}, 1)
	}
	return p
}

// pace waits for the operation's turn among its kind when the volume is
// serial, then sleeps its delay. The caller does the operation and then
// calls release, which ends its turn. A cancelled request stops waiting.
func (p *pacer) pace(ctx context.Context, kind opKind, b behaviour) (release func(), err error) {
	release = func() {}
	if b.serial {
		select {
		case p.turns[kind] <- struct{}{}:
			release = func() { <-p.turns[kind] }
		case <-ctx.Done():
			return nil, status.FromContextError(ctx.Err()).Err()
		}
	}
	if d := b.delay[kind]; d > 0 {
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-t.C:
		case <-ctx.Done():
			release()
			return nil, status.FromContextError(ctx.Err()).Err()
		}
	}
	return release, nil
}

// paceVolume paces an operation on a volume by its stored parameters.
func (p *pacer) paceVolume(ctx context.Context, kind opKind, params map[string]string) (func(), error) {
	b, err := parseBehaviour(params)
	if err != nil {
		return nil, status.Errorf(codes.Internal, "stored parameters: %v", err)
	}
	return p.pace(ctx, kind, b)
}
