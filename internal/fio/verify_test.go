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
`
	got := ParseVerifyFailures(stderr)
	want := []VerifyFailure{
		{Method: "pattern", File: "/v/data", Offset: 8192, Length: 4096, ReceivedDump: "data.8192.received", ExpectedDump: "data.8192.expected"},
		{Method: "crc32c", File: "/v/with space", Offset: 0, Length: 4096},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("ParseVerifyFailures() = %+v, want %+v", got, want)
	}
}
