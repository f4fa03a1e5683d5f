# ISA audit (tests/kernels/isa_audit.py): every function of the server binary and
# of the kernel tests uses only instructions that its Highway target's CPU check
# guarantees (objdump disassembly; x86-64 builds, and aarch64 cross builds with
# binutils-aarch64-linux-gnu's objdump).
find_package(Python3 REQUIRED COMPONENTS Interpreter)
set(cairn_audited $<TARGET_FILE:kernels_tests>)
if(TARGET cairn)
  list(PREPEND cairn_audited $<TARGET_FILE:cairn>)
endif()
if(CMAKE_SYSTEM_PROCESSOR MATCHES "x86_64|AMD64")
  find_program(CAIRN_OBJDUMP objdump REQUIRED)
  add_test(NAME isa_audit_rules COMMAND Python3::Interpreter ${CMAKE_CURRENT_SOURCE_DIR}/kernels/isa_audit_test.py)
  add_test(NAME isa_audit COMMAND Python3::Interpreter ${CMAKE_CURRENT_SOURCE_DIR}/kernels/isa_audit.py
                                  ${cairn_audited})
  set_tests_properties(isa_audit_rules isa_audit PROPERTIES LABELS isa)
endif()
if(CMAKE_SYSTEM_PROCESSOR MATCHES "aarch64|arm64")
  # Cross builds (scripts/check-arm-tests.sh) and native Arm builds alike; the
  # script runs the same audit itself, this makes it a ctest too.
  find_program(CAIRN_ARM_OBJDUMP NAMES aarch64-linux-gnu-objdump objdump)
  if(CAIRN_ARM_OBJDUMP)
    set(cairn_audit_flags "")
    if(CMAKE_CXX_FLAGS MATCHES "dotprod")
      set(cairn_audit_flags --arm-dotprod)
    endif()
    add_test(NAME isa_audit_rules COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/kernels/isa_audit_test.py)
    add_test(NAME isa_audit COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/kernels/isa_audit.py
                                    ${cairn_audit_flags} ${cairn_audited})
    set_tests_properties(isa_audit_rules isa_audit PROPERTIES LABELS isa)
  endif()
endif()
