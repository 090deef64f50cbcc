# cmake -DHALFWAY=<halfway binary> -DVERSION=<version> -DOUTPUT=<file> -P HalfwayManPage.cmake
# Writes the halfway(1) man page from the CLI's own help (`halfway --help-all`), so that the page
# always lists the options the binary has. The help text is kept as it is printed (a no-fill
# block); the sections around it say what the help does not: environment, exit status, files.
execute_process(COMMAND ${HALFWAY} --help-all OUTPUT_VARIABLE help RESULT_VARIABLE rc
                ERROR_VARIABLE err)
if(NOT rc EQUAL 0 OR help STREQUAL "")
  message(FATAL_ERROR "${HALFWAY} --help-all failed (${rc}): ${err}")
endif()

# roff: a backslash is \e; a line that starts with . or ' would be a request, so \& goes first.
string(REPLACE "\\" "\\e" help "${help}")
string(REGEX REPLACE "(^|\n)([.'])" "\\1\\\\&\\2" help "${help}")
string(REGEX REPLACE "\n+$" "" help "${help}")

file(WRITE ${OUTPUT} ".TH HALFWAY 1 \"\" \"halfway ${VERSION}\" \"User Commands\"
.SH NAME
halfway \\- GPU kernels whose low-precision results can be trusted
.SH SYNOPSIS
.B halfway
[\\fIOPTIONS\\fR] \\fISUBCOMMAND\\fR [\\fIARGUMENTS\\fR]
.br
.B halfway --version
.br
.B halfway completion
\\fBbash\\fR|\\fBzsh\\fR
.SH DESCRIPTION
halfway runs, compares and inspects compute kernels over low-precision floats (f16, bf16, fp8
with f32 accumulation) on a reference interpreter, a CPU device and a Vulkan device. Results go
to standard output, logs and errors to standard error.
.PP
The options of every subcommand, as \\fBhalfway --help-all\\fR prints them:
.PP
.nf
${help}
.fi
.SH ENVIRONMENT
.TP
.B HALFWAY_LOG
Log level: trace, debug, info (default), warn, error or off.
.TP
.B HALFWAY_VK_DEVICE
The Vulkan device: an index or a case-insensitive substring of its name.
.TP
.B HALFWAY_VK_VALIDATION
1, true, on or yes turns the Khronos validation layer on.
.TP
.B NO_COLOR
Set and non-empty: no colours in log lines.
.SH EXIT STATUS
0 success, 1 a differential violation (diff, demo), 2 any error.
.SH SEE ALSO
The README, the specs and docs/environment.md, installed under share/doc/halfway.
")
