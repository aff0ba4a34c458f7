// Boost.JSON's implementation, compiled into this library only (no extra package), in a unit of its own: the value
// tree's JSON codec (value_json.cpp), the record reader and the shape engine's summaries use its headers.
#include <boost/json/src.hpp>
