// A Verilator testbench for the Verilog of any hwgen PE: benchmarks/engines.py compiles it with
// the design to time Verilator on the same job as the other engines.
//
// The memory is ideal, as hwgen.sim.MemoryModel() is: every request is accepted, a read is
// answered from the cycle after it (in request order, held until the PE takes it) and writes are
// applied lane by lane. The bench pulses ctrl.start, offers threads on `launch` one every
// LAUNCH_DELAY cycles when the PE has that stream (a pipeline), runs until ctrl.done and prints
// the busy cycles, the seconds the clock loop took, the cycles, a checksum of the memory and
// the CPU seconds of the clock loop.
//
// engines.py writes tb_config.h: TOP (the Verilated class), its header, the PE's beat formats
// (ADDR_BITS, RD_LANES, RD_STRIDE, WR_LANES, WR_STRIDE, ELEMENT_BITS), HAS_LAUNCH, THREADS,
// LAUNCH_DELAY and SET_PARAMS(top), which drives the run-time parameters with PORT(ctrl, name).
//
// usage: tb MEMORY.bin   (the memory's elements as little-endian uint64, updated in place)

#include "tb_config.h"

#include <array>
#include <chrono>
#include <ctime>
#include <cstdint>
#include <cstdio>
#include <deque>
#include <memory>
#include <vector>

#include "verilated.h"

// Verilator spells a double underscore in a port name as `___05F`.
#define PORT(group, signal) group##___05F##signal

// Up to 64 bits of a port of any width Verilator gives (a scalar, or words of a VlWide).
template<class T>
static uint64_t bits(const T &port, unsigned offset, unsigned width) {
	uint64_t v = uint64_t(port) >> offset;
	return width >= 64 ? v : v & ((uint64_t(1) << width) - 1);
}

template<std::size_t N>
static uint64_t bits(const VlWide<N> &port, unsigned offset, unsigned width) {
	uint64_t v = 0;
	for (unsigned done = 0; done < width;) {
		unsigned bit = offset + done, word = bit / 32, shift = bit % 32;
		unsigned take = std::min(32 - shift, width - done);
		uint64_t part = (uint64_t(port[word]) >> shift) & ((uint64_t(1) << take) - 1);
		v |= part << done;
		done += take;
	}
	return v;
}

template<class T>
static void put(T &port, unsigned offset, unsigned width, uint64_t value) {
	uint64_t mask = (width >= 64 ? ~uint64_t(0) : (uint64_t(1) << width) - 1) << offset;
	port = T((uint64_t(port) & ~mask) | ((value << offset) & mask));
}

template<std::size_t N>
static void put(VlWide<N> &port, unsigned offset, unsigned width, uint64_t value) {
	for (unsigned done = 0; done < width;) {
		unsigned bit = offset + done, word = bit / 32, shift = bit % 32;
		unsigned take = std::min(32 - shift, width - done);
		uint32_t mask = uint32_t(((uint64_t(1) << take) - 1) << shift);
		port[word] = (port[word] & ~mask) | (uint32_t((value >> done) << shift) & mask);
		done += take;
	}
}

int main(int argc, char **argv) {
	if (argc != 2) {
		fprintf(stderr, "usage: %s MEMORY.bin\n", argv[0]);
		return 2;
	}
	FILE *file = fopen(argv[1], "rb");
	if (!file) {
		perror(argv[1]);
		return 2;
	}
	std::vector<uint64_t> memory;
	uint64_t word;
	while (fread(&word, sizeof word, 1, file) == 1)
		memory.push_back(word);
	fclose(file);

	auto context = std::make_unique<VerilatedContext>();
	auto top = std::make_unique<TOP>(context.get());
	const uint64_t element_mask = ELEMENT_BITS >= 64 ? ~uint64_t(0) : (uint64_t(1) << ELEMENT_BITS) - 1;

	top->clk = 0;
	top->rst = 0;
	top->PORT(rd_req, ready) = 1;
	top->PORT(wr_req, ready) = 1;
	top->PORT(rd_rsp, valid) = 0;
	SET_PARAMS(top);
	top->PORT(ctrl, start) = 1;
	top->eval();

	using Beat = std::array<uint64_t, RD_LANES>;
	std::deque<Beat> responses;
	uint64_t busy = 0, cycle = 0;
	unsigned launched = 0;
	bool offered = false;
	auto started = std::chrono::steady_clock::now();
	std::clock_t cpu_started = std::clock();
	for (;;) {
		// Sample at the edge, then take it.
		bool rd = top->PORT(rd_req, valid), wr = top->PORT(wr_req, valid);
		bool taken = top->PORT(rd_rsp, valid) && top->PORT(rd_rsp, ready);
		bool done = top->PORT(ctrl, done), is_busy = top->PORT(ctrl, busy);
		// Writes first: a read sees every write accepted no later than itself.
		if (wr) {
			uint64_t addr = bits(top->PORT(wr_req, payload), 0, ADDR_BITS);
			for (unsigned lane = 0; lane < WR_LANES; lane++) {
				if (!bits(top->PORT(wr_req, payload), ADDR_BITS + lane, 1))
					continue;
				uint64_t a = addr + uint64_t(lane) * WR_STRIDE;
				if (a < memory.size())
					memory[a] = bits(top->PORT(wr_req, payload),
					                 ADDR_BITS + WR_LANES + lane * ELEMENT_BITS,
					                 ELEMENT_BITS) & element_mask;
			}
		}
		Beat request{};
		if (rd) {
			uint64_t addr = bits(top->PORT(rd_req, payload), 0, ADDR_BITS);
			for (unsigned lane = 0; lane < RD_LANES; lane++) {
				bool on = bits(top->PORT(rd_req, payload), ADDR_BITS + lane, 1);
				uint64_t a = addr + uint64_t(lane) * RD_STRIDE;
				request[lane] = on && a < memory.size() ? memory[a] : 0;
			}
		}
#if HAS_LAUNCH
		bool launch_taken = top->PORT(launch, valid) && top->PORT(launch, ready);
#endif
		top->clk = 1;
		top->eval();
		top->clk = 0;
		cycle++;

		if (cycle > 1) {
			busy += is_busy;
			if (done)
				break;
		}
		top->PORT(ctrl, start) = 0;
		if (taken)
			responses.pop_front();
		if (rd)
			responses.push_back(request);
		top->PORT(rd_rsp, valid) = !responses.empty();
		if (!responses.empty())
			for (unsigned lane = 0; lane < RD_LANES; lane++)
				put(top->PORT(rd_rsp, payload), lane * ELEMENT_BITS, ELEMENT_BITS, responses.front()[lane]);
#if HAS_LAUNCH
		if (launch_taken) {
			offered = false;
			launched++;
			top->PORT(launch, valid) = 0;
		}
		if (!offered && launched < THREADS && cycle - 1 >= uint64_t(launched) * LAUNCH_DELAY) {
			top->PORT(launch, payload) = launched;
			top->PORT(launch, valid) = 1;
			offered = true;
		}
#else
		(void)offered;
		(void)launched;
#endif
		top->eval();
	}
	double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
	double cpu_seconds = double(std::clock() - cpu_started) / CLOCKS_PER_SEC;
	top->final();

	uint64_t checksum = 1469598103934665603ull;
	for (uint64_t v : memory)
		checksum = (checksum ^ v) * 1099511628211ull;
	file = fopen(argv[1], "wb");
	fwrite(memory.data(), sizeof(uint64_t), memory.size(), file);
	fclose(file);
	printf("%llu %.6f %llu %016llx %.6f\n", (unsigned long long)busy, seconds,
	       (unsigned long long)cycle, (unsigned long long)checksum, cpu_seconds);
	return 0;
}
