// Boost.JSON's implementation, compiled into this library only (no extra package), in a unit of its own: the value
// tree's JSON reader (value_json_reader.cpp and its scans), the record reader and the shape engine's summaries use its
// headers.
#include <boost/json/src.hpp>
