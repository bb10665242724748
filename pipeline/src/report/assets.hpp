#pragma once
// The report's page template, script and style, compiled in from pipeline/src/report/assets/ (see
// cmake/embed_assets.cmake).
namespace attnscan::report {

extern const char* const kPageTemplate;  // markers @TITLE@ @CSS@ @DATA@ @JS@
extern const char* const kReportScript;
extern const char* const kReportStyle;

}  // namespace attnscan::report
