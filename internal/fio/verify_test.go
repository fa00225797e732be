package fio

import (
	"reflect"
	"testing"
)

func TestParseVerifyFailures(t *testing.T) {
	stderr := `fio: got pattern 'ff', wanted '00'. Bad bits 8
fio: bad pattern block offset 100
pattern: verify failed at file /v/data offset 8192, length 33554432 (requested block: offset=8192, length=4096, flags=8)
       received data dumped as data.8192.received
       expected data dumped as data.8192.expected
fio: verify type mismatch (0 media, 18 given)
crc32c: verify failed at file /v/with space offset 0, length 4096 (requested block: offset=0, length=4096, flags=88)
       Expected CRC: 9249b8a5
       Received CRC: c270fb7d
verify: bad magic header 0, wanted acca at file /v/d a offset 4096, length 4096 (requested block: offset=4096, length=4096)
verify: bad magic header 0, wanted acca at file /v/d a offset 12288, length 4096 (requested block: offset=12288, length=4096)
       hdr_fail data dumped as d a.4096.hdr_fail
       hdr_fail data dumped as d a.12288.hdr_fail
`
	got := ParseVerifyFailures(stderr)
	want := []VerifyFailure{
		{Method: "pattern: verify failed", File: "/v/data", Offset: 8192, Length: 4096, ReceivedDump: "data.8192.received", ExpectedDump: "data.8192.expected"},
		{Method: "crc32c: verify failed", File: "/v/with space", Offset: 0, Length: 4096},
		{Method: "verify: bad magic header", File: "/v/d a", Offset: 4096, Length: 4096, ReceivedDump: "d a.4096.hdr_fail"},
		{Method: "verify: bad magic header", File: "/v/d a", Offset: 12288, Length: 4096, ReceivedDump: "d a.12288.hdr_fail"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("ParseVerifyFailures() = %+v, want %+v", got, want)
	}
}
