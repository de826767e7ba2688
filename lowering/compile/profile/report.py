"""The text of a profile, in Theano's layout (``ProfileStats.summary`` writes it).

Sections: ``Function profiling`` (calls, times, compile time per pass), ``Class``, ``Ops`` and
``Apply`` tables (columns ``<% time> <sum %> <apply time> <time per call> <type> <#call>
<#apply> <name>``, slowest first), the time in CPU ops, GPU ops and transfers, and the
``Memory Profile``. Numbers are formatted as Theano formats them, so that tools reading Theano's
profiles read these.

>>> print(_header(_CLASS_COLUMNS))
<% time> <sum %> <apply time> <time per call> <type> <#call> <#apply> <Class name>
>>> print(_row(_CLASS_COLUMNS, (59.6, 59.6, 0.839, 4.19e-05, _impl("C"), 20001, 3, "CGemv")))
  59.6%    59.6%       0.839s       4.19e-05s     C     20001        3   CGemv
"""
from __future__ import annotations

# (header, format) of each column, joined by one space, as Theano's profiler writes them.
_CLASS_COLUMNS = (("<% time>", "  %4.1f%% "), ("<sum %>", " %5.1f%% "),
                  ("<apply time>", "   %7.3fs "), ("<time per call>", "     %8.2es "),
                  ("<type>", "   %2s "), ("<#call>", "  %4d  "), ("<#apply>", "  %4d  "),
                  ("<Class name>", "%s"))
_OPS_COLUMNS = _CLASS_COLUMNS[:-1] + (("<Op name>", "%s"),)
_APPLY_COLUMNS = (("<% time>", "  %4.1f%% "), ("<sum %>", " %5.1f%% "),
                  ("<apply time>", "   %7.3fs "), ("<time per call>", "     %8.2es "),
                  ("<#call>", " %4d  "), ("<id>", "%3d"), ("<Apply name>", "%s"))


def _header(columns) -> str:
    return " ".join(h for h, _ in columns)


def _row(columns, values) -> str:
    return " ".join(f for _, f in columns) % tuple(values)


def _impl(impl: str) -> str:
    return "C " if impl == "C" else impl


def write_summary(stats, out, n_ops: int, n_apply: int, memory_nodes: bool = False,
                  min_memory_size: int = 1024) -> None:
    """Write ``stats`` (a ``ProfileStats``) to the text stream ``out``."""
    _function_section(stats, out)
    local_time = stats.thunk_time
    if local_time > 0:
        _grouped_section(out, "Class", _CLASS_COLUMNS, stats.by_class(), n_ops, local_time,
                         "Classes")
        _kinds_line(stats, out, local_time)
        _grouped_section(out, "Ops", _OPS_COLUMNS, stats.by_op(), n_ops, local_time, "Ops")
        _apply_section(stats, out, n_apply, local_time, memory_nodes)
    elif stats.fct_callcount > 0:
        reason = "it has no Apply node" if not stats.nodes else "its nodes took no measurable time"
        out.write(f"  No execution time accumulated ({reason})\n\n")
    _memory_section(stats, out, n_apply if memory_nodes else 0, min_memory_size)


def _function_section(stats, out) -> None:
    w = out.write
    w("Function profiling\n==================\n")
    w(f"  Message: {stats.message}\n")
    w("  Time in %i calls to Function.__call__: %es\n" % (stats.fct_callcount,
                                                          stats.fct_call_time))
    if stats.fct_call_time > 0:
        w("  Time in Function.fn.__call__: %es (%.3f%%)\n" % (
            stats.vm_call_time, 100 * stats.vm_call_time / stats.fct_call_time))
        if stats.thunk_time > 0:
            w("  Time in thunks: %es (%.3f%%)\n" % (
                stats.thunk_time, 100 * stats.thunk_time / stats.fct_call_time))
    w("  Total compile time: %es\n" % stats.compile_time)
    w("    Number of Apply nodes: %d\n" % len(stats.nodes))
    w("    Optimizer time: %es\n" % stats.optimizer_time)
    for name, seconds in stats.pass_times.items():
        w("       %s: %es\n" % (name, seconds))
    w("    Linker time (includes code generation/compiling): %es\n" % stats.linker_time)
    w("  Profiling plan compile time (every node compiled alone; not in the total): %es\n"
      % stats.plan_compile_time)
    w("\n")


def _grouped_section(out, title, columns, rows, limit, local_time, plural) -> None:
    out.write(f"{title}\n---\n{_header(columns)}\n")
    total = 0.0
    for name, seconds, calls, applies, impl in rows[:limit]:
        if calls == 0:
            continue
        total += seconds
        out.write(_row(columns, (100 * seconds / local_time, 100 * total / local_time, seconds,
                                 seconds / calls, _impl(impl), calls, applies, name)) + "\n")
    rest = rows[limit:]
    out.write("   ... (remaining %i %s account for %6.2f%%(%.2fs) of the runtime)\n" % (
        len(rest), plural, sum(100 * r[1] / local_time for r in rest), sum(r[1] for r in rest)))
    out.write("\n")


def _kinds_line(stats, out, local_time) -> None:
    kinds = stats.time_by_kind()
    out.write("Spent %.3fs(%.2f%%) in cpu Op, %.3fs(%.2f%%) in gpu Op and %.3fs(%.2f%%) "
              "transfer Op\n\n" % (kinds["cpu"], 100 * kinds["cpu"] / local_time,
                                   kinds["gpu"], 100 * kinds["gpu"] / local_time,
                                   kinds["transfer"], 100 * kinds["transfer"] / local_time))


def _apply_section(stats, out, limit, local_time, details) -> None:
    out.write(f"Apply\n------\n{_header(_APPLY_COLUMNS)}\n")
    nodes = sorted(stats.nodes, key=lambda n: n.time, reverse=True)
    total = 0.0
    for node in nodes[:limit]:
        total += node.time
        if node.calls == 0:
            continue
        out.write(_row(_APPLY_COLUMNS, (100 * node.time / local_time, 100 * total / local_time,
                                        node.time, node.time / node.calls, node.calls,
                                        node.index, node.apply)) + "\n")
        if details:
            for what, described in (("input", node.inputs), ("output", node.outputs)):
                for k, d in enumerate(described):
                    if d is None:
                        out.write(f"    {what} {k}: a constant\n")
                    else:
                        out.write(f"    {what} {k}: dtype={d[1]}, shape={d[0]}, "
                                  f"strides={d[2]} \n")
    rest = nodes[limit:]
    out.write("   ... (remaining %i Apply instances account for %.2f%%(%.2fs) of the runtime)\n"
              % (len(rest), sum(100 * n.time / local_time for n in rest),
                 sum(n.time for n in rest)))
    idle = [n for n in stats.nodes if n.calls == 0]
    if idle and stats.fct_callcount:  # the branches of an ifelse that no call took
        out.write("   ... (%i Apply instances never ran: %s)\n"
                  % (len(idle), ", ".join(f"{n.index} {n.apply}" for n in idle)))
    out.write("\n")


def _kb(size: int) -> str:
    return "%dKB" % int(round(size / 1024.0))


def _memory_section(stats, out, limit, min_memory_size) -> None:
    w = out.write
    if not any(record.sizes for record in stats.memory):
        return
    peaks = stats.memory_peaks()
    several = len(stats.memory) > 1
    w("Memory Profile" + (" (the max between all functions in that profile)" if several
                          else "") + "\n")
    w("(intermediate buffers of the last call; inputs, shared values and constants not "
      "counted)\n---\n")
    gc = "allow_gc=True" if stats.allow_gc else "allow_gc=False"
    for title, values in ((f"Max peak memory with current setting ({gc})", peaks.current),
                          ("Max peak memory with current setting and flag "
                           "optimizer_excluding=inplace", peaks.without_inplace),
                          ("Max peak memory if allow_gc=False", peaks.without_gc)):
        w(f"    {title}\n")
        w(f"        CPU: {_kb(values['cpu'])}\n        GPU: {_kb(values['gpu'])}\n")
        w(f"        CPU + GPU: {_kb(values['all'])}\n")
    w("---\n\n")
    if limit:
        _memory_nodes(stats, out, limit, min_memory_size)


def _memory_nodes(stats, out, limit, min_memory_size) -> None:
    w = out.write
    if len(stats.memory) > 1:
        w("    This list is based on all functions in the profile\n")
    w("    <Sum apply outputs (bytes)> <Apply outputs shape> <created/inplace/view> "
      "<Apply node>\n\n")
    sized = [(sum(d[3] for d in n.outputs), n) for n in stats.nodes if n.outputs]
    sized.sort(key=lambda item: item[0], reverse=True)
    shown = 0
    for size, node in sized[:limit]:
        if size < min_memory_size:
            break
        shapes = [d[0] for d in node.outputs]
        w("     %9dB  %s %s %s\n" % (size, shapes, " ".join(node.storage), node.apply))
        shown += 1
    rest = sum(size for size, _ in sized[shown:])
    whole = sum(size for size, _ in sized)
    share = "%.2f%%" % (100.0 * rest / whole) if whole else "0%"
    w("   ... (remaining %i Apply account for %4dB/%dB (%s) of the Apply with dense outputs "
      "sizes)\n\n" % (len(sized) - shown, rest, whole, share))
    if shown == 0:
        w("    All Apply nodes have output sizes that take less than %dB.\n" % min_memory_size)
    w("    <created/inplace/view>: c is a new buffer, v a view of an input (as bufferize makes "
      "them), i a result written into an input's buffer (the compiler's inplace decision).\n\n")
