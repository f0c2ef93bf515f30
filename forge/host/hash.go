package host

import (
	"crypto/sha256"
	"encoding/binary"
	"hash"
)

// MessageHash computes the framed hash of a sequence of channel messages:
// the sha256 of every message in order, each framed as
//
//	[channel u8][length u64 little-endian][bytes]
//
// The output hash of a run (output_sha256 in results, journals and
// proofs) is the MessageHash of every message the program sent, on any
// channel; the input hash is the MessageHash of every message delivered to
// it. The framing keeps message boundaries and channels, so "ab" sent as
// one message and as two hash differently. The zero value is not usable;
// call NewMessageHash.
type MessageHash struct {
	h hash.Hash
}

// NewMessageHash returns the hash of the empty sequence.
func NewMessageHash() *MessageHash { return &MessageHash{h: sha256.New()} }

// Add appends one message.
func (m *MessageHash) Add(ch uint8, msg []byte) {
	var hdr [9]byte
	hdr[0] = ch
	binary.LittleEndian.PutUint64(hdr[1:], uint64(len(msg)))
	m.h.Write(hdr[:])
	m.h.Write(msg)
}

// Sum returns the hash of the messages added so far.
func (m *MessageHash) Sum() [32]byte {
	var out [32]byte
	m.h.Sum(out[:0])
	return out
}
