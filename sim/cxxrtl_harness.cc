// The clock loop of hwgen's compiled engine (hwgen.sim.compiled), around a design that Yosys's
// CXXRTL back-end turned into C++.
//
// A model is this file compiled with one design: the wrapper the engine writes defines
// HWGEN_TOP (the design's top-level class) and includes the design's C++ first. Python loads the
// shared library with ctypes and calls the extern "C" functions at the end.
//
// Every cycle of hw_run() is, in order:
//   1. settle: the clock falls and the design evaluates with the inputs set after the last edge;
//   2. sample: every agent reads the outputs it acts on (what Amaranth's `ctx.tick().sample()`
//      gives a testbench: the values at the edge);
//   3. edge: the clock rises and the design commits its registers (and evaluates once more when
//      an HMM host reads outputs after the edge, as a testbench's `ctx.get()` after a tick does);
//   4. agents, in this order: the memory server, the job host or the pipeline host, then every
//      HMM host (the bus operation it is in, and the next one when that finished).
// This is the order of hwgen.sim's Amaranth testbenches (the memory server is a process; the job
// host is the first testbench, the HMM hosts follow in order), so both engines see the same
// values in the same cycles. hw_run() returns to Python when the job and every HMM host are
// done, when the job fails, or after a given number of cycles.
//
// The memory server and its random stream follow hwgen/sim/memory.py and
// hwgen/sim/random_stream.py line by line; the differential tests compare every figure.

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include <cxxrtl/cxxrtl_vcd.h>

namespace hwgen {

using cxxrtl::chunk_t;

// --- signals --------------------------------------------------------------------------------

// One top-level port: where its bits are and how wide it is.
struct Port {
	chunk_t *curr = nullptr;   // read here
	chunk_t *next = nullptr;   // write here (inputs)
	size_t width = 0;
	size_t chunks = 0;
	bool registered = false;   // a register's storage: current right after a commit

	bool bound() const { return curr != nullptr; }

	uint64_t get() const {
		uint64_t v = curr[0];
		if (chunks > 1)
			v |= uint64_t(curr[1]) << 32;
		return v;
	}

	bool bit() const { return curr[0] & 1; }

	void set(uint64_t v) {
		next[0] = chunk_t(v);
		for (size_t i = 1; i < chunks; i++) {
			next[i] = i == 1 ? chunk_t(v >> 32) : 0;
		}
		mask_top();
	}

	void mask_top() {
		size_t top_bits = width % 32;
		if (top_bits)
			next[chunks - 1] &= (chunk_t(1) << top_bits) - 1;
	}
};

// Up to 64 bits at `offset` of a chunk array.
static inline uint64_t get_bits(const chunk_t *data, size_t offset, size_t width) {
	uint64_t v = 0;
	size_t done = 0;
	while (done < width) {
		size_t bit = offset + done;
		size_t chunk = bit / 32, shift = bit % 32;
		size_t take = std::min<size_t>(32 - shift, width - done);
		uint64_t part = (uint64_t(data[chunk]) >> shift) & ((uint64_t(1) << take) - 1);
		v |= part << done;
		done += take;
	}
	return v;
}

// Up to 64 bits into `offset` of a chunk array.
static inline void put_bits(chunk_t *data, size_t offset, size_t width, uint64_t v) {
	size_t done = 0;
	while (done < width) {
		size_t bit = offset + done;
		size_t chunk = bit / 32, shift = bit % 32;
		size_t take = std::min<size_t>(32 - shift, width - done);
		chunk_t mask = chunk_t(((uint64_t(1) << take) - 1) << shift);
		data[chunk] = (data[chunk] & ~mask) | (chunk_t((v >> done) << shift) & mask);
		done += take;
	}
}

// --- the memory's random stream (hwgen/sim/random_stream.py) ----------------------------------

struct RandomStream {
	uint64_t state;

	explicit RandomStream(uint64_t seed = 0) : state(seed) {}

	uint64_t next() {
		state += 0x9E3779B97F4A7C15ull;
		uint64_t z = state;
		z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
		z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
		return z ^ (z >> 31);
	}

	double uniform() { return double(next() >> 11) * (1.0 / 9007199254740992.0); }

	uint64_t below(uint64_t n) { return next() % n; }
};

// --- the memory server (hwgen/sim/memory.py) ---------------------------------------------------

struct Response {
	int64_t ready_at;
	size_t offset;   // into the port's response data pool
};

struct PEPorts {
	Port rd_req_valid, rd_req_ready, rd_req_payload;
	Port rd_rsp_valid, rd_rsp_ready, rd_rsp_payload;
	Port wr_req_valid, wr_req_ready, wr_req_payload;
	unsigned aw = 0, rd_lanes = 1, rd_stride = 1, wr_lanes = 1, wr_stride = 1, bits = 8, elem_bytes = 1;
	uint64_t aw_mask = 0, elem_mask = 0;

	// Responses in request order; their data in a pool of fixed-size chunk arrays.
	std::vector<Response> pending;
	std::vector<chunk_t> pool;
	size_t head = 0;
	int64_t last_ready_at = 0;

	// What the memory saw (PortTraffic).
	uint64_t read_beats = 0, read_elements = 0, bytes_read = 0;
	uint64_t write_beats = 0, write_elements = 0, bytes_written = 0;
	bool record = false;
	std::vector<uint64_t> read_addresses, write_addresses;

	// Samples of this cycle.
	bool s_rd_valid, s_rd_ready, s_rsp_valid, s_rsp_ready, s_wr_valid, s_wr_ready;
};

struct Error {
	int code = 0;            // 0: none
	std::string message;
};

enum {
	ERR_NONE = 0,
	ERR_MEMORY = 1,          // an access outside the memory
	ERR_TIMEOUT = 2,         // still busy after max_cycles
	ERR_NOT_BUSY = 3,        // the pipeline was not busy after start
	ERR_HMM = 4,             // an HMM did not answer as its host expects
};

struct Memory {
	std::vector<PEPorts> ports;
	uint64_t *storage = nullptr;
	size_t size = 0;
	bool limited = false;
	double bandwidth = 0, credit = 0, credit_cap = 0;
	int64_t latency = 1;
	uint64_t jitter = 0;
	double backpressure = 0;
	RandomStream rng;
	int64_t cycle = 0;

	void sample() {
		for (auto &p : ports) {
			p.s_wr_valid = p.wr_req_valid.bit();
			p.s_wr_ready = p.wr_req_ready.bit();
			p.s_rd_valid = p.rd_req_valid.bit();
			p.s_rd_ready = p.rd_req_ready.bit();
			p.s_rsp_valid = p.rd_rsp_valid.bit();
			p.s_rsp_ready = p.rd_rsp_ready.bit();
		}
	}

	// The payloads are read after the edge: the design's outputs are unbuffered values computed
	// from the inputs and registers of the settled cycle, so they are only valid before the edge.
	// Copy the payloads a transfer needs at sampling time.
	std::vector<std::vector<chunk_t>> rd_payload, wr_payload;

	void sample_payloads() {
		for (size_t i = 0; i < ports.size(); i++) {
			auto &p = ports[i];
			if (p.s_wr_valid && p.s_wr_ready)
				std::copy(p.wr_req_payload.curr, p.wr_req_payload.curr + p.wr_req_payload.chunks,
				          wr_payload[i].begin());
			if (p.s_rd_valid && p.s_rd_ready)
				std::copy(p.rd_req_payload.curr, p.rd_req_payload.curr + p.rd_req_payload.chunks,
				          rd_payload[i].begin());
		}
	}

	bool transfer_write(PEPorts &p, const chunk_t *payload, uint64_t &bytes, Error &error) {
		uint64_t addr = get_bits(payload, 0, p.aw);
		size_t n = 0;
		for (unsigned lane = 0; lane < p.wr_lanes; lane++) {
			if (!get_bits(payload, p.aw + lane, 1))
				continue;
			uint64_t a = (addr + uint64_t(lane) * p.wr_stride) & p.aw_mask;
			if (a >= size) {
				error.code = ERR_MEMORY;
				error.message = "write to element address " + std::to_string(a) +
				                " outside the memory of " + std::to_string(size) + " elements";
				return false;
			}
			storage[a] = get_bits(payload, p.aw + p.wr_lanes + lane * p.bits, p.bits) & p.elem_mask;
			if (p.record)
				p.write_addresses.push_back(a);
			n++;
		}
		p.write_beats++;
		p.write_elements += n;
		p.bytes_written += n * p.elem_bytes;
		bytes = n * p.elem_bytes;
		return true;
	}

	bool transfer_read(PEPorts &p, const chunk_t *payload, uint64_t &bytes, Error &error) {
		uint64_t addr = get_bits(payload, 0, p.aw);
		size_t chunks = p.rd_rsp_payload.chunks;
		size_t offset = p.pool.size();
		p.pool.resize(offset + chunks, 0);
		size_t n = 0;
		for (unsigned lane = 0; lane < p.rd_lanes; lane++) {
			if (!get_bits(payload, p.aw + lane, 1))
				continue;
			uint64_t a = (addr + uint64_t(lane) * p.rd_stride) & p.aw_mask;
			if (a >= size) {
				error.code = ERR_MEMORY;
				error.message = "read of element address " + std::to_string(a) +
				                " outside the memory of " + std::to_string(size) + " elements";
				return false;
			}
			put_bits(p.pool.data() + offset, size_t(lane) * p.bits, p.bits, storage[a]);
			if (p.record)
				p.read_addresses.push_back(a);
			n++;
		}
		int64_t ready_at = cycle + latency - 1;   // `cycle` is this edge's number
		if (jitter)
			ready_at += int64_t(rng.below(jitter + 1));
		ready_at = std::max(ready_at, p.last_ready_at);
		p.last_ready_at = ready_at;
		p.pending.push_back({ready_at, offset});
		p.read_beats++;
		p.read_elements += n;
		p.bytes_read += n * p.elem_bytes;
		bytes = n * p.elem_bytes;
		return true;
	}

	bool after_edge(Error &error) {
		cycle++;
		// 1. Transfers that happened at this edge: writes first, then reads.
		uint64_t spent = 0, bytes = 0;
		for (size_t i = 0; i < ports.size(); i++) {
			auto &p = ports[i];
			if (p.s_wr_valid && p.s_wr_ready) {
				if (!transfer_write(p, wr_payload[i].data(), bytes, error))
					return false;
				spent += bytes;
			}
		}
		for (size_t i = 0; i < ports.size(); i++) {
			auto &p = ports[i];
			if (p.s_rd_valid && p.s_rd_ready) {
				if (!transfer_read(p, rd_payload[i].data(), bytes, error))
					return false;
				spent += bytes;
			}
			if (p.s_rsp_valid && p.s_rsp_ready) {
				p.head++;
				if (p.head > 1024) {
					size_t drop = p.head;
					size_t chunks = p.rd_rsp_payload.chunks;
					p.pending.erase(p.pending.begin(), p.pending.begin() + drop);
					p.pool.erase(p.pool.begin(), p.pool.begin() + drop * chunks);
					for (auto &r : p.pending)
						r.offset -= drop * chunks;
					p.head = 0;
				}
			}
		}
		// 2. Bandwidth budget for the next cycle.
		bool budget_ok = true;
		if (limited) {
			credit = std::min(credit_cap, credit - double(spent) + bandwidth);
			budget_ok = credit > 0;
		}
		// 3. Drive the ports for the next cycle.
		for (auto &p : ports) {
			bool rd_ready, wr_ready, hold;
			if (backpressure != 0) {
				rd_ready = budget_ok && rng.uniform() >= backpressure;
				wr_ready = budget_ok && rng.uniform() >= backpressure;
				hold = rng.uniform() < backpressure;
			} else {
				rd_ready = wr_ready = budget_ok;
				hold = false;
			}
			p.rd_req_ready.set(rd_ready);
			p.wr_req_ready.set(wr_ready);
			bool rsp_valid = !hold && p.head < p.pending.size() && p.pending[p.head].ready_at <= cycle;
			p.rd_rsp_valid.set(rsp_valid);
			if (rsp_valid) {
				const chunk_t *data = p.pool.data() + p.pending[p.head].offset;
				std::copy(data, data + p.rd_rsp_payload.chunks, p.rd_rsp_payload.next);
			}
		}
		return true;
	}
};

// --- the job hosts (hwgen/sim/harness.py run_pes, hwgen/sim/host.py run_threads) ---------------

struct Job {
	Port start, busy, done;
	uint64_t cycles = 0;   // busy cycles seen
	bool running = true;
	bool s_busy = false, s_done = false;
};

struct JobHost {
	// PE jobs: every PE is started at once; the job is finished when every PE was done.
	std::vector<Job> jobs;
	// Pipeline jobs: threads are offered on `launch` one every `delay` cycles.
	bool pipeline = false;
	Port launch_valid, launch_ready, launch_payload;
	uint64_t threads = 0, delay = 0;
	std::vector<int64_t> launch_cycles;
	bool offered = false, s_launch_ready = false;

	int phase = 0;           // 0: start pending, 1: started, 2: running, 3: finished
	uint64_t elapsed = 0;    // cycles since the start edge (the pipeline host's `cycle`)
	uint64_t max_cycles = ~0ull;

	void begin() {
		for (auto &j : jobs)
			j.start.set(1);
		phase = 1;
	}

	void sample() {
		for (auto &j : jobs) {
			j.s_busy = j.busy.bit();
			j.s_done = j.done.bit();
		}
		if (pipeline)
			s_launch_ready = launch_ready.bit();
	}

	void offer(uint64_t cycle) {
		uint64_t thread = launch_cycles.size();
		if (!offered && thread < threads && cycle >= thread * delay) {
			launch_payload.set(thread);
			launch_valid.set(1);
			offered = true;
		}
	}

	bool after_edge(Error &error) {
		if (phase == 1) {
			for (auto &j : jobs)
				j.start.set(0);
			phase = 2;
			if (pipeline)
				offer(0);
			return true;
		}
		if (phase != 2)
			return true;
		if (pipeline) {
			Job &j = jobs[0];
			if (!j.s_busy) {
				error.code = ERR_NOT_BUSY;
				error.message = "the pipeline is not busy after start";
				return false;
			}
			if (offered && s_launch_ready) {
				launch_cycles.push_back(int64_t(elapsed));
				offered = false;
				launch_valid.set(0);
			}
			elapsed++;
			j.cycles++;
			if (j.s_done) {
				phase = 3;
				return true;
			}
			if (elapsed > max_cycles) {
				error.code = ERR_TIMEOUT;
				error.message = "the pipeline was still busy after " + std::to_string(max_cycles) + " cycles";
				return false;
			}
			offer(elapsed);
			return true;
		}
		elapsed++;
		bool any = false;
		for (auto &j : jobs) {
			if (!j.running)
				continue;
			j.cycles += j.s_busy;
			if (j.s_done)
				j.running = false;
			any |= j.running;
		}
		if (!any) {
			phase = 3;
			return true;
		}
		if (elapsed > max_cycles) {
			error.code = ERR_TIMEOUT;
			error.message = "a PE was still busy after " + std::to_string(max_cycles) + " cycles";
			return false;
		}
		return true;
	}
};

// --- bus operations on an HMM port -------------------------------------------------------------

struct HostPort {
	Port addr, read, write, wdata, rdata, rvalid;
};

enum { OP_NONE = 0, OP_WAIT = 1, OP_WRITE = 2, OP_READ = 3, OP_POLL = 4 };

// Cycles a read may wait for its word before the host gives up: far more than the latency any
// HMM's port declares (its layout's read_latency_cycles).
static const size_t MAX_READ_LATENCY = 64;

// One bus operation of a host, or a wait.
struct Slot {
	int op = OP_NONE;
	HostPort *port = nullptr;
	uint64_t remaining = 0;              // OP_WAIT, OP_POLL
	uint64_t period = 0;                 // OP_POLL: look at the job every `period` cycles,
	uint64_t limit = 0;                  //   until it has waited `limit` cycles
	uint64_t waited = 0;
	uint64_t addr = 0, data = 0;         // OP_WRITE
	std::vector<uint64_t> addrs, words;  // OP_READ
	size_t step = 0;                     // OP_READ: cycles done
	bool finished = false;

	// What the operation drives before its first edge (the coroutine runs right after an edge).
	void begin() {
		finished = false;
		if (op == OP_WRITE) {
			port->addr.set(addr);
			port->wdata.set(data);
			port->write.set(1);
		} else if (op == OP_READ) {
			step = 0;
			words.clear();
			if (addrs.empty())
				finished = true;    // as the Python host: reading nothing takes no cycle
			else
				drive_read();
		} else if (op == OP_WAIT && remaining == 0) {
			finished = true;
		}
	}

	void drive_read() {
		if (step < addrs.size())
			port->addr.set(addrs[step]);
		port->read.set(step < addrs.size());
	}

	bool after_edge(bool job_finished, Error &error) {
		switch (op) {
		case OP_WAIT:
			if (--remaining == 0)
				finished = true;
			break;
		case OP_POLL:
			if (--remaining == 0) {
				waited += period;
				if (job_finished || waited >= limit)
					finished = true;
				else
					remaining = period;
			}
			break;
		case OP_WRITE:
			port->write.set(0);
			finished = true;
			break;
		case OP_READ:
			// The port answers in order, with rvalid, its read latency after each read (the
			// latency the layout declares, which the Python host waits).
			if (port->rvalid.bit())
				words.push_back(port->rdata.get());
			step++;
			if (words.size() < addrs.size() && step >= addrs.size() + MAX_READ_LATENCY) {
				char text[80];
				snprintf(text, sizeof text, "the HMM did not answer the read of %#llx",
				         (unsigned long long)addrs[words.size()]);
				error.code = ERR_HMM;
				error.message = text;
				return false;
			}
			if (words.size() == addrs.size()) {
				port->read.set(0);
				finished = true;
			} else {
				drive_read();
			}
			break;
		}
		if (finished)
			op = OP_NONE;
		return true;
	}
};

// --- the HMM hosts (hwgen/sim/hmm_host.py HMMHost.read_when_done and read_all) ---------------
//
// One per HMM port: the host's program runs in C++, bus operation after bus operation on its
// slot, in the very cycles the Python host takes in Amaranth's simulator; the words it reads are
// kept for Python to decode in bulk once the run is over.

enum { REG_CONTROL = 0, REG_LAYOUT_ID = 1 };
enum { CMD_FREEZE = 4, CMD_SNAPSHOT = 8 };
enum { STATUS_RUNNING = 0, STATUS_BUSY = 1 };
static const uint64_t NEVER = ~0ull;

// Bits `offset .. offset + bits` (up to 64) of little-endian words of `word_bits` bits.
static uint64_t field_of(const std::vector<uint64_t> &words, uint64_t word_bits, uint64_t offset,
                         uint64_t bits) {
	uint64_t v = 0;
	for (uint64_t i = 0; i < bits; i++) {
		uint64_t b = offset + i;
		v |= ((words[b / word_bits] >> (b % word_bits)) & 1) << i;
	}
	return v;
}

static std::string hex(uint64_t v) {
	char text[24];
	snprintf(text, sizeof text, "0x%llx", (unsigned long long)v);
	return text;
}

struct HmmTrace {
	std::string name;
	bool stop = true;
	uint64_t base = 0, stride = 0, depth = 0, words = 0, consumed_register = 0;
	uint64_t written_offset = 0, written_bits = 0, dropped_offset = 0, dropped_bits = 0;
	std::vector<uint64_t> wanted;    // the snapshot words that hold `written` and `dropped`
	std::vector<uint64_t> records;   // the words of every record read, oldest first
};

struct HmmTable {
	std::string name;
	std::vector<uint64_t> addrs, words;
};

struct HmmHost {
	size_t port = 0;
	uint64_t word_bits = 64, snapshot_base = 0, snapshot_words = 1, layout_id = 0;
	uint64_t command_limit = 0;
	uint64_t drain_interval = NEVER;   // NEVER: no drains, poll for the job's end
	uint64_t poll_cycles = 16;
	uint64_t max_cycles = NEVER;       // NEVER: wait for the job as long as it takes
	std::vector<HmmTrace> traces;
	std::vector<HmmTable> tables;
	std::vector<uint64_t> snapshot;    // the final snapshot's words
	Slot slot;
	bool done = false;

	enum State {
		START, POLLED, LOOP, DRAIN, DRAIN_VALUES, TRACE_CONSUMED, TRACE_RECORDS, DRAIN_WRITTEN,
		WAITED, LAYOUT_ID, SNAPSHOT, TABLE_STATUS, TABLE_WORDS, FINAL_TRACE,
		COMMAND_WRITTEN, COMMAND_STATUS,
	};
	State state = START;
	State after_command = START, after_trace = START;
	uint64_t waited = 0, command_waited = 0, command_bits = 0;
	size_t trace = 0, table = 0;
	uint64_t written = 0, dropped = 0;

	void read(HostPort *ports, std::vector<uint64_t> addrs, State next) {
		slot.op = OP_READ;
		slot.port = &ports[port];
		slot.addrs = std::move(addrs);
		slot.begin();
		state = next;
	}

	void write(HostPort *ports, uint64_t addr, uint64_t data, State next) {
		slot.op = OP_WRITE;
		slot.port = &ports[port];
		slot.addr = addr;
		slot.data = data;
		slot.begin();
		state = next;
	}

	void command(HostPort *ports, uint64_t bits, State next) {
		command_bits = bits;
		command_waited = 0;
		after_command = next;
		write(ports, REG_CONTROL, bits, COMMAND_WRITTEN);
	}

	bool fail(Error &error, const std::string &message) {
		error.code = ERR_HMM;
		error.message = message;
		return false;
	}

	std::string not_finished() const {
		return "the job was not finished after the host waited " + std::to_string(waited) +
		       " cycles for it (at most " + std::to_string(max_cycles) + ")";
	}

	// Read the records of trace `trace` from `written` and `dropped` (HMMHost.read_trace), then
	// go on at `next`.
	void read_trace(HostPort *ports, State next) {
		after_trace = next;
		const HmmTrace &t = traces[trace];
		if (t.stop) {
			read(ports, {t.consumed_register}, TRACE_CONSUMED);
			return;
		}
		bool full = dropped > 0 || written == t.depth;
		uint64_t count = full ? t.depth : written;
		uint64_t period = 2 * t.depth;
		read_records((written + period - count % period) % period, count, ports);
	}

	void read_records(uint64_t first, uint64_t count, HostPort *ports) {
		const HmmTrace &t = traces[trace];
		std::vector<uint64_t> addrs;
		addrs.reserve(count * t.words);
		for (uint64_t i = 0; i < count; i++)
			for (uint64_t w = 0; w < t.words; w++)
				addrs.push_back(t.base + (first + i) % t.depth * t.stride + w);
		read(ports, std::move(addrs), TRACE_RECORDS);
	}

	// The next stop-mode trace from `trace` on, or traces.size().
	size_t next_stop(size_t from) const {
		while (from < traces.size() && !traces[from].stop)
			from++;
		return from;
	}

	// Go on after the slot's operation finished (or at the start): issue the next operation, or
	// finish. False when the HMM or the job failed the host.
	bool resume(HostPort *ports, bool job_finished, Error &error) {
		do {
			// An operation that takes no cycle (a read of no word) finished as it began.
			if (slot.finished) {
				slot.finished = false;
				slot.op = OP_NONE;
			}
			if (!advance(ports, job_finished, error))
				return false;
		} while (slot.finished);
		return true;
	}

	bool advance(HostPort *ports, bool job_finished, Error &error) {
		std::vector<uint64_t> words = std::move(slot.words);
		slot.words.clear();
		for (;;) {
			switch (state) {
			case START:
				if (drain_interval == NEVER && !job_finished) {
					if (max_cycles == 0)
						return fail(error, not_finished());
					slot.op = OP_POLL;
					slot.remaining = slot.period = poll_cycles;
					slot.limit = max_cycles;
					slot.waited = 0;
					slot.begin();
					state = POLLED;
					return true;
				}
				state = LOOP;
				break;
			case POLLED:
				waited = slot.waited;
				if (!job_finished)
					return fail(error, not_finished());
				waited = 0;
				state = LOOP;
				break;
			case LOOP:
				if (job_finished) {
					read(ports, {REG_LAYOUT_ID}, LAYOUT_ID);
					return true;
				}
				if (max_cycles != NEVER && waited >= max_cycles)
					return fail(error, not_finished());
				trace = next_stop(0);
				state = DRAIN;
				break;
			case DRAIN:
				if (trace == traces.size()) {
					waited += drain_interval;
					if (drain_interval == 0) {
						state = LOOP;
						break;
					}
					slot.op = OP_WAIT;
					slot.remaining = drain_interval;
					slot.begin();
					state = WAITED;
					return true;
				}
				command(ports, CMD_SNAPSHOT, DRAIN_VALUES);
				return true;
			case COMMAND_WRITTEN:
				read(ports, {REG_CONTROL}, COMMAND_STATUS);
				return true;
			case COMMAND_STATUS:
				if (words[0] >> STATUS_BUSY & 1) {
					command_waited += slot.step;    // the status read's latency
					if (command_waited > command_limit) {
						std::string names = command_bits & CMD_FREEZE ? "freeze + snapshot"
						                                              : "snapshot";
						return fail(error, "the HMM was still busy " +
						            std::to_string(command_waited) + " cycles after the command " +
						            names + " (it ends within " + std::to_string(command_limit) +
						            "): the HMM does not answer");
					}
					read(ports, {REG_CONTROL}, COMMAND_STATUS);
					return true;
				}
				state = after_command;
				if (state == DRAIN_VALUES) {
					std::vector<uint64_t> addrs;
					for (uint64_t w : traces[trace].wanted)
						addrs.push_back(snapshot_base + w);
					read(ports, std::move(addrs), DRAIN_VALUES);
					return true;
				}
				{
					std::vector<uint64_t> addrs;
					for (uint64_t w = 0; w < snapshot_words; w++)
						addrs.push_back(snapshot_base + w);
					read(ports, std::move(addrs), SNAPSHOT);
				}
				return true;
			case DRAIN_VALUES: {
				const HmmTrace &t = traces[trace];
				std::vector<uint64_t> padded(snapshot_words, 0);
				for (size_t i = 0; i < t.wanted.size(); i++)
					padded[t.wanted[i]] = words[i];
				written = field_of(padded, word_bits, t.written_offset, t.written_bits);
				dropped = field_of(padded, word_bits, t.dropped_offset, t.dropped_bits);
				read_trace(ports, DRAIN_WRITTEN);
				return true;
			}
			case TRACE_CONSUMED: {
				const HmmTrace &t = traces[trace];
				uint64_t period = 2 * t.depth;
				uint64_t consumed = words[0];
				uint64_t count = (written % period + period - consumed % period) % period;
				read_records(consumed, count, ports);
				return true;
			}
			case TRACE_RECORDS: {
				auto &records = traces[trace].records;
				records.insert(records.end(), words.begin(), words.end());
				if (after_trace == DRAIN_WRITTEN) {
					write(ports, traces[trace].consumed_register, written, DRAIN_WRITTEN);
					return true;
				}
				trace++;
				state = FINAL_TRACE;
				break;
			}
			case DRAIN_WRITTEN:
				trace = next_stop(trace + 1);
				state = DRAIN;
				break;
			case WAITED:
				state = LOOP;
				break;
			case LAYOUT_ID:
				if (words[0] != layout_id)
					return fail(error, "the HMM's layout id is " + hex(words[0]) +
					            ", the manifest's " + hex(layout_id) + ": wrong manifest");
				command(ports, CMD_FREEZE | CMD_SNAPSHOT, SNAPSHOT);
				return true;
			case SNAPSHOT:
				snapshot = words;
				table = 0;
				state = TABLE_STATUS;
				if (!tables.empty()) {
					read(ports, {REG_CONTROL}, TABLE_STATUS);
					return true;
				}
				trace = 0;
				state = FINAL_TRACE;
				break;
			case TABLE_STATUS:
				if (words[0] >> STATUS_RUNNING & 1)
					return fail(error, "table '" + tables[table].name +
					            "' can only be read while the HMM is frozen");
				read(ports, tables[table].addrs, TABLE_WORDS);
				return true;
			case TABLE_WORDS:
				tables[table].words = words;
				if (++table < tables.size()) {
					read(ports, {REG_CONTROL}, TABLE_STATUS);
					return true;
				}
				trace = 0;
				state = FINAL_TRACE;
				break;
			case FINAL_TRACE:
				if (trace == traces.size()) {
					done = true;
					return true;
				}
				written = field_of(snapshot, word_bits, traces[trace].written_offset,
				                   traces[trace].written_bits);
				dropped = field_of(snapshot, word_bits, traces[trace].dropped_offset,
				                   traces[trace].dropped_bits);
				read_trace(ports, FINAL_TRACE);
				return true;
			}
		}
	}
};

// --- the simulation ---------------------------------------------------------------------------

// Let the clock fall before the next edge. A flattened top keeps the clock's last value in
// `prev_p_clk`: clearing it lets the clock input stay high and saves a commit of every wire.
template<class Top>
static auto clock_low(Top &top, int) -> decltype(top.prev_p_clk, void()) {
	top.prev_p_clk = cxxrtl::value<1>{0u};
}

template<class Top>
static auto clock_low(Top &top, long) -> decltype(top.p_clk, void()) {
	top.p_clk.set(false);
	top.commit();
}

// A design without a `clk` input (driven by hwgen.sim.CompiledSimulator alone) has no clock
// loop to run.
template<class Top>
static void clock_low(Top &, ...) {}

struct Simulation {
	HWGEN_TOP top;
	cxxrtl::debug_items items;
	Port clk, rst;
	// Signals and memories that hwgen.sim.CompiledSimulator reads and writes, by index.
	std::vector<const cxxrtl::debug_item *> items_by_index;
	// The signals of up to 64 bits it takes back after every settle (hw_pull_into()).
	std::vector<const cxxrtl::debug_item *> pulled;
	uint64_t *pulled_values = nullptr;
	size_t *pulled_changed = nullptr, *pulled_count = nullptr;
	// hw_clock_cycles()'s stops (hw_clock_stops()).
	std::vector<const cxxrtl::debug_item *> nonzero, watched;
	std::vector<uint64_t> initial;
	Memory memory;
	JobHost host;
	std::vector<HostPort> host_ports;
	std::vector<HmmHost> hmms;
	Error error;
	uint64_t cycle = 0;
	uint64_t edge_evaluations = 0;   // evaluations after an edge, to read outputs there

	FILE *vcd_file = nullptr;
	cxxrtl::vcd_writer vcd;

	// Whether one evaluation settles the design: CXXRTL knows it per design (no combinational
	// feedback through wires) and says so by what eval() returns.
	bool one_delta = false;

	Simulation() {
		top.debug_info(&items, nullptr, "");
		clk = port("clk");
		rst = port("rst");
		one_delta = top.eval();
		top.commit();
		if (!one_delta)
			top.step();
	}

	~Simulation() {
		close_vcd();
	}

	Port port(const std::string &name) {
		Port p;
		auto found = items.table.find(name);
		if (found == items.table.end() || found->second.size() != 1)
			return p;
		const cxxrtl::debug_item &item = found->second[0];
		if (item.type != cxxrtl::debug_item::VALUE && item.type != cxxrtl::debug_item::WIRE)
			return p;
		p.curr = item.curr;
		p.next = item.next;
		p.width = item.width;
		p.chunks = (item.width + 31) / 32;
		p.registered = item.flags & cxxrtl::debug_item::DRIVEN_SYNC;
		return p;
	}

	void close_vcd() {
		if (vcd_file) {
			flush_vcd();
			fclose(vcd_file);
			vcd_file = nullptr;
		}
	}

	void flush_vcd() {
		fwrite(vcd.buffer.data(), 1, vcd.buffer.size(), vcd_file);
		vcd.buffer.clear();
	}

	void sample_vcd(uint64_t time_ps) {
		vcd.sample(time_ps);
		if (vcd.buffer.size() > (1 << 20))
			flush_vcd();
	}

	// One cycle; false when the job failed.
	bool cycle_once() {
		settle_and_edge();
		cycle++;
		if (!memory.after_edge(error))
			return false;
		if (!host.after_edge(error))
			return false;
		bool finished = host.phase == 3;
		for (auto &hmm : hmms) {
			if (hmm.slot.op == OP_NONE)
				continue;
			if (!hmm.slot.after_edge(finished, error))
				return false;
			if (hmm.slot.finished) {
				hmm.slot.finished = false;
				if (!hmm.resume(host_ports.data(), finished, error))
					return false;
			}
		}
		return true;
	}

	// The job has finished and every HMM host has read its HMM.
	bool done() const {
		if (host.phase != 3)
			return false;
		for (auto &hmm : hmms)
			if (!hmm.done)
				return false;
		return true;
	}

	// Settle the inputs of this cycle, sample, and take the clock edge.
	void settle_and_edge() {
		if (one_delta) {
			// The design settles in one evaluation, so the evaluation at the rising edge
			// computes the values at the edge (sampled here) and the registers' next state at
			// once; the commit takes the edge.
			clock_low(top, 0);
			clk.set(1);
			top.eval();
			sample();
			top.commit();
		} else {
			clk.set(0);
			top.step();
			sample();
			clk.set(1);
			top.step();
		}
		// An output the design computes from its registers holds the value of before the edge:
		// evaluate once more where such an output is read right after the edge, as a
		// testbench's `ctx.get()` after a tick reads it: in the cycles of a read burst (the host
		// looks at rvalid in each), unless the port's rdata and rvalid are registers themselves
		// (the commit made them current; the model is built so that they are, see
		// hwgen/sim/compiled.py).
		bool reading = vcd_file != nullptr;
		for (auto &hmm : hmms) {
			const HostPort &port = host_ports[hmm.port];
			reading |= hmm.slot.op == OP_READ && !(port.rdata.registered && port.rvalid.registered);
		}
		if (reading) {
			top.step();
			edge_evaluations++;
		}
		if (vcd_file)
			sample_vcd((cycle + 1) * 10000);
	}

	void sample() {
		if (vcd_file)
			sample_vcd(cycle * 10000 + 5000);
		memory.sample();
		memory.sample_payloads();
		host.sample();
	}
};

}  // namespace hwgen

using hwgen::Simulation;

#ifdef HWGEN_PROFILE_GENERATE
// libgcov's: write the profile counted so far (and not again at exit).
extern "C" void __gcov_dump(void);
#endif

// The model is compiled with hidden visibility, so calls inside it need no indirection; only
// this interface is exported.
#pragma GCC visibility push(default)
extern "C" {

Simulation *hw_create() {
	return new Simulation();
}

void hw_destroy(Simulation *sim) { delete sim; }

// Width of a top-level port, or -1 if the design has no such port.
long hw_port_width(Simulation *sim, const char *name) {
	hwgen::Port p = sim->port(name);
	return p.bound() ? long(p.width) : -1;
}

// Any port: read into / write from an array of 32-bit chunks.
int hw_get(Simulation *sim, const char *name, uint32_t *chunks) {
	hwgen::Port p = sim->port(name);
	if (!p.bound())
		return -1;
	std::copy(p.curr, p.curr + p.chunks, chunks);
	return 0;
}

int hw_set(Simulation *sim, const char *name, const uint32_t *chunks) {
	hwgen::Port p = sim->port(name);
	if (!p.bound() || p.next == nullptr)
		return -1;
	std::copy(chunks, chunks + p.chunks, p.next);
	p.mask_top();
	return 0;
}

// The memory: its timing, and its contents (the array stays Python's).
void hw_memory(Simulation *sim, uint64_t *storage, size_t size, int limited, double bandwidth,
               long latency, uint64_t jitter, double backpressure, uint64_t seed) {
	auto &m = sim->memory;
	m.storage = storage;
	m.size = size;
	m.limited = limited;
	m.bandwidth = bandwidth;
	m.latency = latency;
	m.jitter = jitter;
	m.backpressure = backpressure;
	m.rng = hwgen::RandomStream(seed);
}

// A PE's memory ports, named `<prefix>rd_req__valid` and so on; returns its index or -1.
long hw_add_pe(Simulation *sim, const char *prefix, unsigned aw, unsigned rd_lanes,
               unsigned rd_stride, unsigned wr_lanes, unsigned wr_stride, unsigned bits,
               unsigned elem_bytes, int record) {
	std::string p(prefix);
	hwgen::PEPorts ports;
	ports.rd_req_valid = sim->port(p + "rd_req__valid");
	ports.rd_req_ready = sim->port(p + "rd_req__ready");
	ports.rd_req_payload = sim->port(p + "rd_req__payload");
	ports.rd_rsp_valid = sim->port(p + "rd_rsp__valid");
	ports.rd_rsp_ready = sim->port(p + "rd_rsp__ready");
	ports.rd_rsp_payload = sim->port(p + "rd_rsp__payload");
	ports.wr_req_valid = sim->port(p + "wr_req__valid");
	ports.wr_req_ready = sim->port(p + "wr_req__ready");
	ports.wr_req_payload = sim->port(p + "wr_req__payload");
	for (auto *port : {&ports.rd_req_valid, &ports.rd_req_ready, &ports.rd_req_payload,
	                   &ports.rd_rsp_valid, &ports.rd_rsp_ready, &ports.rd_rsp_payload,
	                   &ports.wr_req_valid, &ports.wr_req_ready, &ports.wr_req_payload})
		if (!port->bound())
			return -1;
	ports.aw = aw;
	ports.aw_mask = aw >= 64 ? ~0ull : (1ull << aw) - 1;
	ports.rd_lanes = rd_lanes;
	ports.rd_stride = rd_stride;
	ports.wr_lanes = wr_lanes;
	ports.wr_stride = wr_stride;
	ports.bits = bits;
	ports.elem_mask = bits >= 64 ? ~0ull : (1ull << bits) - 1;
	ports.elem_bytes = elem_bytes;
	ports.record = record;
	auto &m = sim->memory;
	m.ports.push_back(std::move(ports));
	m.rd_payload.emplace_back(m.ports.back().rd_req_payload.chunks);
	m.wr_payload.emplace_back(m.ports.back().wr_req_payload.chunks);
	// The bucket holds one cycle's budget plus the biggest beat of any port.
	double biggest = 0;
	for (auto &q : m.ports)
		biggest = std::max(biggest, double(std::max(q.rd_lanes, q.wr_lanes) * q.elem_bytes));
	m.credit_cap = m.bandwidth + biggest;
	return long(m.ports.size() - 1);
}

// A job on `<prefix>ctrl__start/busy/done`; returns its index or -1.
long hw_add_job(Simulation *sim, const char *prefix) {
	std::string p(prefix);
	hwgen::Job job;
	job.start = sim->port(p + "ctrl__start");
	job.busy = sim->port(p + "ctrl__busy");
	job.done = sim->port(p + "ctrl__done");
	if (!job.start.bound() || !job.busy.bound() || !job.done.bound())
		return -1;
	sim->host.jobs.push_back(job);
	return long(sim->host.jobs.size() - 1);
}

// Make the job a pipeline's: `threads` threads offered on `launch`, one every `delay` cycles.
int hw_pipeline(Simulation *sim, uint64_t threads, uint64_t delay) {
	auto &h = sim->host;
	h.launch_valid = sim->port("launch__valid");
	h.launch_ready = sim->port("launch__ready");
	h.launch_payload = sim->port("launch__payload");
	if (!h.launch_valid.bound() || !h.launch_ready.bound() || !h.launch_payload.bound())
		return -1;
	h.pipeline = true;
	h.threads = threads;
	h.delay = delay;
	return 0;
}

// Pulse `start` now (the run-time parameters are set already); give up after `max_cycles`
// cycles of the job (all ones: never).
// Every HMM host starts its program then (it fails at once where it may not wait: see
// hw_error()).
void hw_start(Simulation *sim, uint64_t max_cycles) {
	sim->host.max_cycles = max_cycles;
	sim->host.begin();
	for (auto &hmm : sim->hmms)
		if (!hmm.resume(sim->host_ports.data(), false, sim->error))
			return;
}

uint64_t hw_job_cycles(Simulation *sim, long job) { return sim->host.jobs[job].cycles; }

size_t hw_launches(Simulation *sim, int64_t *cycles, size_t capacity) {
	auto &l = sim->host.launch_cycles;
	size_t n = std::min(capacity, l.size());
	std::copy(l.begin(), l.begin() + n, cycles);
	return l.size();
}

// The memory's bookkeeping of a PE's ports: read beats, elements, bytes, then the same of writes.
void hw_traffic(Simulation *sim, long pe, uint64_t *out) {
	auto &p = sim->memory.ports[pe];
	uint64_t values[] = {p.read_beats, p.read_elements, p.bytes_read,
	                     p.write_beats, p.write_elements, p.bytes_written};
	std::copy(values, values + 6, out);
}

size_t hw_addresses(Simulation *sim, long pe, int writes, uint64_t *out, size_t capacity) {
	auto &p = sim->memory.ports[pe];
	auto &a = writes ? p.write_addresses : p.read_addresses;
	size_t n = std::min(capacity, a.size());
	std::copy(a.begin(), a.begin() + n, out);
	return a.size();
}

// The host of the HMM port `<prefix>addr`, `read`, `write`, `wdata`, `rdata`, `rvalid`: it waits
// for the job, draining the stop-mode traces every `drain_interval` cycles (all ones: it polls
// the job's end every `poll_cycles` instead), giving up after `max_cycles` (all ones: never),
// then reads everything. Returns its index, or -1 when the design has no such port.
long hw_add_hmm(Simulation *sim, const char *prefix, uint64_t word_bits, uint64_t snapshot_base,
                uint64_t snapshot_words, uint64_t layout_id, uint64_t command_limit,
                uint64_t drain_interval, uint64_t poll_cycles, uint64_t max_cycles) {
	std::string p(prefix);
	hwgen::HostPort port;
	port.addr = sim->port(p + "addr");
	port.read = sim->port(p + "read");
	port.write = sim->port(p + "write");
	port.wdata = sim->port(p + "wdata");
	port.rdata = sim->port(p + "rdata");
	port.rvalid = sim->port(p + "rvalid");
	for (auto *q : {&port.addr, &port.read, &port.write, &port.wdata, &port.rdata, &port.rvalid})
		if (!q->bound())
			return -1;
	if (port.rdata.width > 64)
		return -1;
	// Operations keep pointers into host_ports: ports are added before the job starts.
	sim->host_ports.push_back(port);
	hwgen::HmmHost hmm;
	hmm.port = sim->host_ports.size() - 1;
	hmm.word_bits = word_bits;
	hmm.snapshot_base = snapshot_base;
	hmm.snapshot_words = snapshot_words;
	hmm.layout_id = layout_id;
	hmm.command_limit = command_limit;
	hmm.drain_interval = drain_interval;
	hmm.poll_cycles = poll_cycles;
	hmm.max_cycles = max_cycles;
	sim->hmms.push_back(std::move(hmm));
	return long(sim->hmms.size() - 1);
}

// A table of the HMM, in the layout's order: the addresses of its entries' words.
void hw_hmm_table(Simulation *sim, long hmm, const char *name, const uint64_t *addrs,
                  size_t count) {
	hwgen::HmmTable table;
	table.name = name;
	table.addrs.assign(addrs, addrs + count);
	sim->hmms[hmm].tables.push_back(std::move(table));
}

// A trace of the HMM, in the layout's order: where its records are, its consumed register,
// where its `written` and `dropped` fields are in the snapshot, and the snapshot words that
// hold them.
void hw_hmm_trace(Simulation *sim, long hmm, const char *name, int stop, uint64_t base,
                  uint64_t stride, uint64_t depth, uint64_t words, uint64_t consumed_register,
                  uint64_t written_offset, uint64_t written_bits, uint64_t dropped_offset,
                  uint64_t dropped_bits, const uint64_t *wanted, size_t wanted_count) {
	hwgen::HmmTrace trace;
	trace.name = name;
	trace.stop = stop;
	trace.base = base;
	trace.stride = stride;
	trace.depth = depth;
	trace.words = words;
	trace.consumed_register = consumed_register;
	trace.written_offset = written_offset;
	trace.written_bits = written_bits;
	trace.dropped_offset = dropped_offset;
	trace.dropped_bits = dropped_bits;
	trace.wanted.assign(wanted, wanted + wanted_count);
	sim->hmms[hmm].traces.push_back(std::move(trace));
}

// The words an HMM host read: `kind` 0 the final snapshot, 1 table `index`'s entries, 2 trace
// `index`'s records (drained and final). Copies up to `capacity`; returns how many there are.
size_t hw_hmm_words(Simulation *sim, long hmm, int kind, long index, uint64_t *out,
                    size_t capacity) {
	auto &h = sim->hmms[hmm];
	const std::vector<uint64_t> &words = kind == 0 ? h.snapshot : kind == 1
	                                     ? h.tables[index].words : h.traces[index].records;
	size_t n = std::min(capacity, words.size());
	std::copy(words.begin(), words.begin() + n, out);
	return words.size();
}

// Run until the job and every HMM host are done, the job fails, or `cycles` cycles have passed.
// Returns the cycles run; after a failure hw_error() says why.
uint64_t hw_run(Simulation *sim, uint64_t cycles) {
	uint64_t n = 0;
	while (n < cycles && !sim->done()) {
		if (!sim->cycle_once())
			return n + 1;
		n++;
	}
	return n;
}

int hw_done(Simulation *sim) { return sim->done(); }

int hw_error(Simulation *sim, char *message, size_t capacity) {
	if (capacity) {
		size_t n = std::min(capacity - 1, sim->error.message.size());
		std::memcpy(message, sim->error.message.data(), n);
		message[n] = 0;
	}
	return sim->error.code;
}

uint64_t hw_cycle(Simulation *sim) { return sim->cycle; }

// How many cycles the clock loop evaluated the design once more after the edge (to read an
// output that is not a register there, or to sample a waveform).
uint64_t hw_edge_evaluations(Simulation *sim) { return sim->edge_evaluations; }

#ifdef HWGEN_PROFILE_GENERATE
// A model built to record a profile for the compiler (hwgen.sim.compiled, profile-guided builds)
// writes it when its training run is over, while the build's folder still exists.
void hw_profile_dump() { __gcov_dump(); }
#endif

// --- any design, driven from Python (hwgen.sim.CompiledSimulator) -----------------------------

// The index of the signal or memory `name` (CXXRTL's space-separated hierarchical name), or -1;
// its width, depth (1 for a signal) and whether it can be written (an input, or a register).
long hw_item(Simulation *sim, const char *name, long *width, long *depth, int *writable) {
	auto found = sim->items.table.find(name);
	if (found == sim->items.table.end())
		return -1;
	const cxxrtl::debug_item *item = &found->second[0];
	if (item->type == cxxrtl::debug_item::ALIAS) {
		// Another name of a wire: write through the wire itself.
		for (auto &entry : sim->items.table)
			for (auto &other : entry.second)
				if (other.curr == item->curr && other.type == cxxrtl::debug_item::WIRE &&
				    other.width == item->width && other.lsb_at == item->lsb_at)
					item = &other;
	}
	*width = long(item->width);
	*depth = long(item->depth);
	// An input, or a register (the design overwrites it at its next edge, as in Amaranth's
	// simulator); not a wire the design's logic drives, which it would overwrite unseen.
	*writable = item->type == cxxrtl::debug_item::MEMORY ||
	            (item->flags & cxxrtl::debug_item::INPUT) ||
	            (item->next && (item->flags & (cxxrtl::debug_item::DRIVEN_SYNC |
	                                           cxxrtl::debug_item::UNDRIVEN)));
	sim->items_by_index.push_back(item);
	return long(sim->items_by_index.size() - 1);
}

// Read row `row` of item `index` (row 0 of a signal) into 32-bit chunks.
void hw_item_get(Simulation *sim, long index, size_t row, uint32_t *chunks) {
	const cxxrtl::debug_item *item = sim->items_by_index[index];
	size_t count = (item->width + 31) / 32;
	if (item->type == cxxrtl::debug_item::OUTLINE)
		item->outline->eval();
	std::copy(item->curr + row * count, item->curr + (row + 1) * count, chunks);
}

// Write row `row` of item `index`: a signal's next value (taken by the next hw_settle()), or a
// memory's row at once.
void hw_item_set(Simulation *sim, long index, size_t row, const uint32_t *chunks) {
	const cxxrtl::debug_item *item = sim->items_by_index[index];
	size_t count = (item->width + 31) / 32;
	// A memory's row, a wire's next value, or an input that is a plain value (read by the next
	// evaluation as it is).
	chunk_t *target = item->type == cxxrtl::debug_item::MEMORY ? item->curr + row * count
	                  : item->next ? item->next : item->curr;
	std::copy(chunks, chunks + count, target);
	size_t top_bits = item->width % 32;
	if (top_bits)
		target[count - 1] &= (chunk_t(1) << top_bits) - 1;
}

// The value of item `item` (of up to 64 bits), its outline evaluated first.
static uint64_t value64(const cxxrtl::debug_item *item) {
	if (item->type == cxxrtl::debug_item::OUTLINE)
		item->outline->eval();
	uint64_t v = item->curr[0];
	if (item->width > 32)
		v |= uint64_t(item->curr[1]) << 32;
	return v;
}

// The signals `indices` (up to 64 bits wide each) that hw_settle_pull() and hw_clock_cycles()
// bring back: their last known values are in `values` (the caller's, kept while in use), the
// positions of those whose value changed go to `changed`, and how many to `*changed_count`
// after hw_clock_cycles().
void hw_pull_into(Simulation *sim, const long *indices, size_t count, uint64_t *values,
                  size_t *changed, size_t *changed_count) {
	sim->pulled.clear();
	for (size_t i = 0; i < count; i++)
		sim->pulled.push_back(sim->items_by_index[indices[i]]);
	sim->pulled_values = values;
	sim->pulled_changed = changed;
	sim->pulled_count = changed_count;
}

// The pulled signals whose value changed, with their new value: how many.
static size_t pull(Simulation *sim) {
	size_t n = 0;
	for (size_t i = 0; i < sim->pulled.size(); i++) {
		uint64_t v = value64(sim->pulled[i]);
		if (v != sim->pulled_values[i]) {
			sim->pulled_values[i] = v;
			sim->pulled_changed[n++] = i;
		}
	}
	return n;
}

// Write signal `index` (of up to 64 bits): as hw_item_set(), from one word.
void hw_item_set64(Simulation *sim, long index, uint64_t value) {
	uint32_t chunks[2] = {uint32_t(value), uint32_t(value >> 32)};
	hw_item_set(sim, index, 0, chunks);
}

// Evaluate and commit until a commit changes nothing, so that the last evaluation saw the
// committed state and every combinational value is current (step() stops after one evaluation
// where the design has no feedback, leaving values computed before the commit); the number of
// evaluations.
size_t hw_settle(Simulation *sim) {
	size_t deltas = 0;
	do {
		sim->top.eval();
		deltas++;
	} while (sim->top.commit());
	return deltas;
}

// Write signal `index` (none if negative) as hw_item_set64(), settle, and pull: one call where
// a clock's edge or a testbench's write commits, or a testbench waits.
size_t hw_settle_pull(Simulation *sim, long index, uint64_t value) {
	if (index >= 0)
		hw_item_set64(sim, index, value);
	hw_settle(sim);
	return pull(sim);
}

// The stops of hw_clock_cycles() from now on, two kinds, each an item of up to 64 bits in
// `stops`: an index `i` stops the loop before a rising edge at which item `i` is not zero; its
// complement `~i` stops it after the first edge after which item `i` differs from its value
// when the call began.
void hw_clock_stops(Simulation *sim, const long *stops, size_t count) {
	sim->nonzero.clear();
	sim->watched.clear();
	for (size_t i = 0; i < count; i++) {
		if (stops[i] >= 0)
			sim->nonzero.push_back(sim->items_by_index[stops[i]]);
		else
			sim->watched.push_back(sim->items_by_index[~stops[i]]);
	}
	sim->initial.resize(sim->watched.size());
}

// Run up to `edges` edges of the clock item `clock` from its level now (at each, the level
// changes and the design settles) unless a stop ends the loop first; the edges run.
static uint64_t clock_cycles(Simulation *sim, long clock, uint64_t edges) {
	const cxxrtl::debug_item *clk = sim->items_by_index[clock];
	chunk_t *level = clk->next ? clk->next : clk->curr;
	const std::vector<const cxxrtl::debug_item *> &nonzero = sim->nonzero,
	                                              &watched = sim->watched;
	std::vector<uint64_t> &initial = sim->initial;
	for (size_t i = 0; i < watched.size(); i++)
		initial[i] = value64(watched[i]);
	bool high = clk->curr[0] & 1;
	for (uint64_t n = 0; n < edges; n++) {
		if (!high)
			for (const cxxrtl::debug_item *item : nonzero)
				if (value64(item))
					return n;
		high = !high;
		*level = high;
		hw_settle(sim);
		for (size_t i = 0; i < watched.size(); i++)
			if (value64(watched[i]) != initial[i])
				return n + 1;
	}
	return edges;
}

// clock_cycles(), then the pull.
uint64_t hw_clock_cycles(Simulation *sim, long clock, uint64_t edges) {
	edges = clock_cycles(sim, clock, edges);
	*sim->pulled_count = pull(sim);
	return edges;
}

// Sample every signal of the waveform at `time_ps`.
void hw_sample_vcd(Simulation *sim, uint64_t time_ps) {
	if (sim->vcd_file)
		sim->sample_vcd(time_ps);
}

int hw_open_vcd(Simulation *sim, const char *path) {
	sim->vcd_file = fopen(path, "wb");
	if (!sim->vcd_file)
		return -1;
	sim->vcd.timescale(1, "ps");
	sim->vcd.add_without_memories(sim->items);
	sim->sample_vcd(0);
	return 0;
}

void hw_close_vcd(Simulation *sim) { sim->close_vcd(); }

}  // extern "C"
#pragma GCC visibility pop
