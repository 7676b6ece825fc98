// Text on its way into a page people open: a student's feedback (Markdown and HTML) and the class page.
// Much of it comes from a submission (its kernel's name, its messages, its compiler's output), so it is
// written so that no byte of it can become markup: no element, attribute, link or script of its own.
#pragma once

#include <string>
#include <string_view>

namespace kreg {

// For HTML element content and quoted attribute values alike: & < > " ' become character references.
std::string html_escape(std::string_view text);

// For Markdown text inside a line the caller starts (a list item, a table cell, after a label): the
// characters that open a tag, an entity, a link or image, an emphasis, a code span, a strike-through or
// a table cell (\ ` * [ ] < > & | ~ #, and '_' unless it stands between two letters or digits) are
// backslash-escaped (CommonMark renders each as the character itself), and line breaks become spaces.
// The caller starts the line, so the text cannot make it a heading, a list or a quote either.
std::string markdown_text(std::string_view text);

// A fenced code block holding text verbatim: the fence is one backtick longer than the longest run of
// backticks in text (at least three), so that nothing in text can close it; Markdown renders its content
// as literal text.
std::string markdown_code_block(std::string_view text);

// A word for a shell command line: unchanged when it is made of [A-Za-z0-9_./:=,+@%-] only, else in
// single quotes (a ' inside as '\''), so that a copied command runs with exactly these arguments.
std::string shell_word(std::string_view text);

}  // namespace kreg
