package workload

import (
	"errors"
	"strings"
	"testing"
)

func TestValidate(t *testing.T) {
	base := BaseSpec()
	mod := func(f func(*Spec)) Spec {
		s := base
		f(&s)
		return s
	}
	tests := []struct {
		name      string
		spec      Spec
		wantField string // "" = valid
		wantIn    string // substring of the message
	}{
		{"base is valid", base, "", ""},
		{"min block size", mod(func(s *Spec) { s.BlockSizeBytes = 512 }), "", ""},
		{"max block size", mod(func(s *Spec) { s.BlockSizeBytes = 16 << 20; s.WorkingSetBytesPerClient = 16 << 20 }), "", ""},
		{"block size not power of two", mod(func(s *Spec) { s.BlockSizeBytes = 3000 }), "workload.blockSizeBytes",
			"workload.blockSizeBytes: 3000 is not allowed: must be a power of two between 512 B and 16 MiB"},
		{"block size too small", mod(func(s *Spec) { s.BlockSizeBytes = 256 }), "workload.blockSizeBytes", "256"},
		{"block size too large", mod(func(s *Spec) { s.BlockSizeBytes = 32 << 20 }), "workload.blockSizeBytes", ""},
		{"block size zero", mod(func(s *Spec) { s.BlockSizeBytes = 0 }), "workload.blockSizeBytes", ""},
		{"block size negative", mod(func(s *Spec) { s.BlockSizeBytes = -4096 }), "workload.blockSizeBytes", ""},
		{"read 0", mod(func(s *Spec) { s.ReadPercent = 0 }), "", ""},
		{"read 100", mod(func(s *Spec) { s.ReadPercent = 100 }), "", ""},
		{"read 101", mod(func(s *Spec) { s.ReadPercent = 101 }), "workload.readPercent", "between 0 and 100"},
		{"read -1", mod(func(s *Spec) { s.ReadPercent = -1 }), "workload.readPercent", ""},
		{"pattern sequential", mod(func(s *Spec) { s.Pattern = Sequential }), "", ""},
		{"pattern empty", mod(func(s *Spec) { s.Pattern = "" }), "workload.pattern", `"" is not allowed: must be one of random, sequential`},
		{"pattern unknown", mod(func(s *Spec) { s.Pattern = "zigzag" }), "workload.pattern", `"zigzag"`},
		{"iodepth 0", mod(func(s *Spec) { s.IODepth = 0 }), "workload.ioDepth", "between 1 and 1024"},
		{"iodepth 1024", mod(func(s *Spec) { s.IODepth = 1024 }), "", ""},
		{"iodepth 1025", mod(func(s *Spec) { s.IODepth = 1025 }), "workload.ioDepth", ""},
		{"psync depth 1", mod(func(s *Spec) { s.IOEngine = PSync; s.IODepth = 1 }), "", ""},
		{"psync depth 16", mod(func(s *Spec) { s.IOEngine = PSync }), "workload.ioDepth", "must be 1 with ioEngine psync"},
		{"sync depth 2", mod(func(s *Spec) { s.IOEngine = Sync; s.IODepth = 2 }), "workload.ioDepth", "ignore a deeper iodepth"},
		{"sync buffered ok", mod(func(s *Spec) { s.IOEngine = Sync; s.IODepth = 1; s.Direct = false }), "", ""},
		{"io_uring buffered ok", mod(func(s *Spec) { s.IOEngine = IOUring; s.Direct = false }), "", ""},
		{"posixaio ok", mod(func(s *Spec) { s.IOEngine = PosixAIO }), "", ""},
		{"engine unknown", mod(func(s *Spec) { s.IOEngine = "mmap" }), "workload.ioEngine", "must be one of libaio, io_uring, psync, sync, posixaio"},
		{"engine empty", mod(func(s *Spec) { s.IOEngine = "" }), "workload.ioEngine", ""},
		{"libaio buffered", mod(func(s *Spec) { s.Direct = false }), "workload.direct", "must be true with ioEngine libaio"},
		{"working set one block", mod(func(s *Spec) { s.WorkingSetBytesPerClient = 4096 }), "", ""},
		{"working set 64 TiB", mod(func(s *Spec) { s.WorkingSetBytesPerClient = 64 << 40 }), "", ""},
		{"working set above 64 TiB", mod(func(s *Spec) { s.WorkingSetBytesPerClient = 64<<40 + 4096 }), "workload.workingSetBytesPerClient", "at most 64 TiB"},
		{"working set below block", mod(func(s *Spec) { s.WorkingSetBytesPerClient = 2048 }), "workload.workingSetBytesPerClient", "at least one block"},
		{"working set zero", mod(func(s *Spec) { s.WorkingSetBytesPerClient = 0 }), "workload.workingSetBytesPerClient", ""},
		{"working set not multiple", mod(func(s *Spec) { s.WorkingSetBytesPerClient = 1<<30 + 512 }), "workload.workingSetBytesPerClient", "multiple of blockSizeBytes (4096)"},
		{"compress 99", mod(func(s *Spec) { s.CompressPercent = 99 }), "", ""},
		{"compress 100", mod(func(s *Spec) { s.CompressPercent = 100 }), "workload.compressPercent", ""},
		{"compress -1", mod(func(s *Spec) { s.CompressPercent = -1 }), "workload.compressPercent", ""},
		{"first in field order", mod(func(s *Spec) { s.CompressPercent = 100; s.ReadPercent = 200; s.Pattern = "x" }), "workload.readPercent", ""},
		{"depth before engine", mod(func(s *Spec) { s.IODepth = 0; s.IOEngine = "x" }), "workload.ioDepth", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := Validate(tt.spec)
			if tt.wantField == "" {
				if err != nil {
					t.Fatalf("Validate() = %v, want nil", err)
				}
				return
			}
			var fe *FieldError
			if !errors.As(err, &fe) {
				t.Fatalf("Validate() = %v, want *FieldError", err)
			}
			if fe.Field != tt.wantField {
				t.Errorf("Field = %q, want %q (%v)", fe.Field, tt.wantField, err)
			}
			if !strings.Contains(err.Error(), tt.wantIn) {
				t.Errorf("message %q does not contain %q", err.Error(), tt.wantIn)
			}
		})
	}
}

func TestValidateAll(t *testing.T) {
	s := Spec{BlockSizeBytes: 3000, ReadPercent: 101, Pattern: "x", IODepth: 0, IOEngine: "x",
		WorkingSetBytesPerClient: 0, CompressPercent: 100}
	var fields []string
	for _, err := range ValidateAll(s) {
		var fe *FieldError
		if !errors.As(err, &fe) {
			t.Fatalf("ValidateAll returned %T, want *FieldError", err)
		}
		fields = append(fields, fe.Field)
	}
	want := []string{"workload.blockSizeBytes", "workload.readPercent", "workload.pattern",
		"workload.ioDepth", "workload.ioEngine", "workload.workingSetBytesPerClient", "workload.compressPercent"}
	if strings.Join(fields, ",") != strings.Join(want, ",") {
		t.Errorf("ValidateAll fields = %v, want %v", fields, want)
	}
	if errs := ValidateAll(BaseSpec()); errs != nil {
		t.Errorf("ValidateAll(BaseSpec()) = %v, want nil", errs)
	}
	err := Validate(s)
	if fe := (*FieldError)(nil); !errors.As(err, &fe) || fe.Field != want[0] {
		t.Errorf("Validate returned %v, want the first of ValidateAll", err)
	}
}

func TestDirections(t *testing.T) {
	for _, tt := range []struct {
		read          int32
		reads, writes bool
	}{{0, false, true}, {1, true, true}, {50, true, true}, {99, true, true}, {100, true, false}} {
		s := Spec{ReadPercent: tt.read}
		if s.HasReads() != tt.reads || s.HasWrites() != tt.writes {
			t.Errorf("read %d: HasReads=%v HasWrites=%v, want %v %v", tt.read, s.HasReads(), s.HasWrites(), tt.reads, tt.writes)
		}
	}
}

func TestValidateAllBadBlockSizeReportedOnce(t *testing.T) {
	s := BaseSpec()
	s.BlockSizeBytes = 3000
	if errs := ValidateAll(s); len(errs) != 1 {
		t.Errorf("ValidateAll = %v, want only the block size error", errs)
	}
}
