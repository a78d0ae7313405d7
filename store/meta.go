package store

import (
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"os"
)

// bbolt keeps two meta pages, 0 and 1, and writes each commit's to the
// page of its txid's parity; it opens with the valid one of the higher
// txid. When one is damaged it silently opens the other, possibly a commit
// older: the store would go back in time, and devices whose EXIT was
// published come back inside. So the rule is: if either meta page is
// invalid, the store refuses to open. After a clean close both are valid,
// and a crash cannot make one invalid (see docs/persistence.md).
//
// bbolt exports no check of its meta pages (common.Meta is internal), so
// they are read here in its on-disk layout: a 16-byte page header (id
// uint64, flags uint16, count uint16, overflow uint32), then the meta.
const (
	metaMagic    = 0xED0CDAED
	metaVersion  = 2
	metaPageFlag = 0x04
	pageHeader   = 16
	// The meta's fields, from the start of the meta: magic, version,
	// pageSize, flags (uint32 each), root bucket {pgid, sequence},
	// freelist, pgid, txid and checksum (uint64 each). The checksum is
	// FNV-64a of the bytes before it.
	metaTxid     = 48
	metaChecksum = 56
	metaSize     = 64
)

// metaPage is what one meta page says, as far as it can be read.
type metaPage struct {
	txid    uint64
	problem string // "" for a valid page
}

// checkMeta reads the two meta pages of the bbolt file at path and
// returns what is wrong with them: nothing when both are valid. A file
// too short to hold them is left to bbolt's open to refuse.
func checkMeta(path string) []string {
	f, err := os.Open(path)
	if err != nil {
		return nil // the open that follows says why
	}
	defer f.Close()
	var buf [pageHeader + metaSize]byte
	if _, err := f.ReadAt(buf[:], 0); err != nil {
		return nil
	}
	m0 := parseMeta(buf[:], 0)
	size := int64(binary.NativeEndian.Uint32(buf[pageHeader+8:]))
	if m0.problem != "" {
		// Page 0's page size is not to be trusted: try the sizes bbolt
		// would, for a page 1 that validates with its own.
		size = 0
		for ps := int64(1024); ps <= 1<<24; ps <<= 1 {
			if _, err := f.ReadAt(buf[:], ps); err != nil {
				break
			}
			if m := parseMeta(buf[:], 1); m.problem == "" && int64(binary.NativeEndian.Uint32(buf[pageHeader+8:])) == ps {
				size = ps
				break
			}
		}
	}
	m1 := metaPage{problem: "no valid meta page at any page size"}
	if size > 0 {
		if _, err := f.ReadAt(buf[:], size); err != nil {
			m1.problem = fmt.Sprintf("unreadable: %v", err)
		} else {
			m1 = parseMeta(buf[:], 1)
		}
	}
	var problems []string
	for i, m := range [2]metaPage{m0, m1} {
		if m.problem == "" {
			continue
		}
		other := [2]metaPage{m0, m1}[1-i]
		consequence := "bbolt would open neither"
		if other.problem == "" {
			consequence = fmt.Sprintf("bbolt would silently open the other, commit %d", other.txid)
			if m.txid > other.txid {
				consequence += fmt.Sprintf(", older than this page's commit %d if its txid is intact", m.txid)
			}
		}
		problems = append(problems, fmt.Sprintf("meta page %d is invalid (%s): %s", i, m.problem, consequence))
	}
	return problems
}

// parseMeta checks the meta page n held in buf (its header and meta).
func parseMeta(buf []byte, n uint64) metaPage {
	meta := buf[pageHeader:]
	m := metaPage{txid: binary.NativeEndian.Uint64(meta[metaTxid:])}
	h := fnv.New64a()
	h.Write(meta[:metaChecksum])
	switch {
	case binary.NativeEndian.Uint64(buf) != n:
		m.problem = fmt.Sprintf("page id %d", binary.NativeEndian.Uint64(buf))
	case binary.NativeEndian.Uint16(buf[8:]) != metaPageFlag:
		m.problem = fmt.Sprintf("page flags %#x, not a meta page's", binary.NativeEndian.Uint16(buf[8:]))
	case binary.NativeEndian.Uint32(meta) != metaMagic:
		m.problem = "bad magic"
	case binary.NativeEndian.Uint32(meta[4:]) != metaVersion:
		m.problem = fmt.Sprintf("version %d", binary.NativeEndian.Uint32(meta[4:]))
	case binary.NativeEndian.Uint64(meta[metaChecksum:]) != h.Sum64():
		m.problem = "checksum mismatch"
	}
	return m
}
