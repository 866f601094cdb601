package lazybreaker

import "sync"

// coreTable holds the shared part of every named breaker created through
// one Registry value, by the slot of its handle: Lookup and Breakers give
// back the value with its Go settings (IsSuccessful, IsExcluded), and the
// garbage collector never destroys a named breaker. A word per slot, in
// chunks made as slots are first used, where a map would cost five times
// that and rehash as it grows.
type coreTable struct {
	mu     sync.Mutex
	chunks []*[coreChunkSlots]*breakerCore
}

const (
	coreChunkBits  = 10
	coreChunkSlots = 1 << coreChunkBits
)

func coreSlot(h uint64) (chunk, at uint64) {
	slot := h & quietIndexMask
	return slot >> coreChunkBits, slot & (coreChunkSlots - 1)
}

func (t *coreTable) put(c *breakerCore) {
	chunk, at := coreSlot(c.h)
	t.mu.Lock()
	defer t.mu.Unlock()
	for uint64(len(t.chunks)) <= chunk {
		t.chunks = append(t.chunks, nil)
	}
	if t.chunks[chunk] == nil {
		t.chunks[chunk] = new([coreChunkSlots]*breakerCore)
	}
	t.chunks[chunk][at] = c
}

// get gives the core of handle h, nil if the table holds none for it (a
// breaker created elsewhere, or a slot reused since).
func (t *coreTable) get(h uint64) *breakerCore {
	chunk, at := coreSlot(h)
	t.mu.Lock()
	defer t.mu.Unlock()
	if uint64(len(t.chunks)) <= chunk || t.chunks[chunk] == nil {
		return nil
	}
	if c := t.chunks[chunk][at]; c != nil && c.h == h {
		return c
	}
	return nil
}

// forget drops the core of handle h, if the slot still holds it.
func (t *coreTable) forget(h uint64) {
	chunk, at := coreSlot(h)
	t.mu.Lock()
	defer t.mu.Unlock()
	if uint64(len(t.chunks)) > chunk && t.chunks[chunk] != nil {
		if c := t.chunks[chunk][at]; c != nil && c.h == h {
			t.chunks[chunk][at] = nil
		}
	}
}
