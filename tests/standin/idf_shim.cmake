# The stand-in's shim of the ESP-IDF CMake functions the firmware's main/CMakeLists.txt calls, so Debian's
# cmake runs that file as it is (script mode, `cmake -P`) with the variant's resolved configuration
# (config/sdkconfig.cmake, written by kconfgen). Semantics follow ESP-IDF's build-system API
# (docs: api-guides/build-system, "ESP-IDF CMake Component/Build Property" functions):
#
#   idf_component_register(SRCS .. SRC_DIRS .. INCLUDE_DIRS .. PRIV_INCLUDE_DIRS .. REQUIRES .. PRIV_REQUIRES ..
#                          EMBED_FILES .. EMBED_TXTFILES .. LDFRAGMENTS .. WHOLE_ARCHIVE)
#       registers the component; sets COMPONENT_LIB (the component's library target) for the caller.
#   idf_build_get_property(var prop [GENERATOR_EXPRESSION])   build properties: BUILD_COMPONENTS, IDF_TARGET,
#       IDF_PATH, PROJECT_DIR, BUILD_DIR, SDKCONFIG, ... (the ones this shim knows; others read back what
#       idf_build_set_property set, else empty)
#   idf_build_set_property(prop value [APPEND])
#   idf_component_get_property(var component prop)          COMPONENT_DIR, COMPONENT_LIB, COMPONENT_NAME
#   partition_table_get_partition_info(var "--partition-name N" "size"|"offset")   from the resolved table
#   esptool_py_flash_to_partition(target partition file)    recorded (what is flashed where)
#   spiffs_create_partition_image(partition base_dir [FLASH_IN_PROJECT] [DEPENDS ..])   recorded
#   build_speaker_assets_bin(partition resolution out len [path])   esp_emote_assets' function: recorded
#   spiffs_create_partition_assets(partition base_dir [FLASH_IN_PROJECT] ...)   esp_mmap_assets' function (the
#       trees before upstream's 2025-09 assets rework call it at top level): recorded
#   target_compile_definitions / target_link_libraries / target_include_directories / target_compile_options /
#   add_custom_command / add_custom_target / add_dependencies / set_source_files_properties: recorded or
#       ignored (no build graph in script mode)
#   file(DOWNLOAD url dest [STATUS var] ...)                offline: never fetched; reported as status 0 with
#       an empty placeholder and recorded, so a tree that downloads at configure time is seen doing so
#
# Every call is recorded in ${XZ_RECORD} (one "kind<TAB>args" line); the stand-in turns it into
# build/xzbuild-cmake.json.

set(CMAKE_BUILD_EARLY_EXPANSION "")

function(_xz_record kind)
    string(REPLACE "\n" " " _line "${ARGN}")
    _file(APPEND "${XZ_RECORD}" "${kind}\t${_line}\n")
endfunction()

function(idf_component_register)
    cmake_parse_arguments(_R "WHOLE_ARCHIVE" ""
        "SRCS;SRC_DIRS;EXCLUDE_SRCS;INCLUDE_DIRS;PRIV_INCLUDE_DIRS;REQUIRES;PRIV_REQUIRES;EMBED_FILES;EMBED_TXTFILES;LDFRAGMENTS;KCONFIG;KCONFIG_PROJBUILD"
        ${ARGN})
    foreach(_src IN LISTS _R_SRCS)
        _xz_record(SRC "${_src}")
    endforeach()
    foreach(_dir IN LISTS _R_SRC_DIRS)
        _xz_record(SRC_DIR "${_dir}")
    endforeach()
    foreach(_req IN LISTS _R_REQUIRES _R_PRIV_REQUIRES)
        _xz_record(REQUIRES "${_req}")
    endforeach()
    list(LENGTH _R_EMBED_FILES _n)
    _xz_record(EMBED_FILES "${_n}")
    _xz_record(REGISTER "main")
    set(COMPONENT_LIB "__idf_main" PARENT_SCOPE)
    set(COMPONENT_NAME "main" PARENT_SCOPE)
endfunction()

function(idf_build_get_property var prop)
    if(prop STREQUAL "BUILD_COMPONENTS")
        set(_v ${XZ_BUILD_COMPONENTS})
    elseif(prop STREQUAL "IDF_TARGET")
        set(_v "${IDF_TARGET}")
    elseif(prop STREQUAL "IDF_PATH")
        set(_v "${IDF_PATH}")
    elseif(prop STREQUAL "PROJECT_DIR")
        set(_v "${PROJECT_DIR}")
    elseif(prop STREQUAL "BUILD_DIR")
        set(_v "${CMAKE_BINARY_DIR}")
    elseif(prop STREQUAL "SDKCONFIG")
        set(_v "${SDKCONFIG}")
    else()
        get_property(_v GLOBAL PROPERTY "XZ_BUILD_${prop}")
    endif()
    set(${var} "${_v}" PARENT_SCOPE)
endfunction()

function(idf_build_set_property prop value)
    if("APPEND" IN_LIST ARGN)
        set_property(GLOBAL APPEND PROPERTY "XZ_BUILD_${prop}" "${value}")
    else()
        set_property(GLOBAL PROPERTY "XZ_BUILD_${prop}" "${value}")
    endif()
    _xz_record(BUILD_PROPERTY "${prop}=${value}")
endfunction()

function(idf_component_get_property var component prop)
    if(prop STREQUAL "COMPONENT_DIR")
        set(_v "${XZ_MANAGED_DIR}/${component}")
    elseif(prop STREQUAL "COMPONENT_LIB")
        set(_v "__idf_${component}")
    elseif(prop STREQUAL "COMPONENT_NAME")
        set(_v "${component}")
    else()
        set(_v "")
    endif()
    set(${var} "${_v}" PARENT_SCOPE)
endfunction()

function(partition_table_get_partition_info var args info)
    string(REGEX MATCH "--partition-name[ ]+([A-Za-z0-9_]+)" _m "${args}")
    set(_name "${CMAKE_MATCH_1}")
    if(DEFINED "XZ_PART_${_name}_${info}")
        set(${var} "${XZ_PART_${_name}_${info}}" PARENT_SCOPE)
    else()
        set(${var} "" PARENT_SCOPE)
    endif()
endfunction()

function(esptool_py_flash_to_partition target partition file)
    _xz_record(FLASH "${partition}=${file}")
endfunction()

function(spiffs_create_partition_image partition base_dir)
    _xz_record(SPIFFS "${partition}=${base_dir}")
endfunction()

function(build_speaker_assets_bin partition)
    _xz_record(SPEAKER_ASSETS "${partition}")
endfunction()

function(spiffs_create_partition_assets partition base_dir)
    _xz_record(MMAP_ASSETS "${partition}=${base_dir}")
endfunction()

function(target_compile_definitions target)
    foreach(_d IN LISTS ARGN)
        if(NOT _d MATCHES "^(PRIVATE|PUBLIC|INTERFACE)$")
            _xz_record(DEFINE "${_d}")
        endif()
    endforeach()
endfunction()

foreach(_cmd target_link_libraries target_include_directories target_compile_options add_custom_command
             add_custom_target add_dependencies set_source_files_properties target_sources)
    cmake_language(EVAL CODE "function(${_cmd})\nendfunction()")
endforeach()

macro(file _xz_op)
    if("${_xz_op}" STREQUAL "DOWNLOAD")
        _xz_file_download(${ARGN})
    elseif("${_xz_op}" MATCHES "^GLOB")
        # CONFIGURE_DEPENDS re-globs at build time; script mode refuses the keyword, the glob is the same
        set(_xz_file_args ${ARGN})
        list(REMOVE_ITEM _xz_file_args CONFIGURE_DEPENDS)
        _file(${_xz_op} ${_xz_file_args})
    else()
        _file(${_xz_op} ${ARGN})
    endif()
endmacro()

function(_xz_file_download url dest)
    cmake_parse_arguments(_D "" "STATUS;EXPECTED_HASH;TIMEOUT;INACTIVITY_TIMEOUT;LOG" "" ${ARGN})
    _xz_record(DOWNLOAD "${url}")
    _file(WRITE "${dest}" "")
    if(_D_STATUS)
        set(${_D_STATUS} "0;\"No error\"" PARENT_SCOPE)
    endif()
endfunction()
