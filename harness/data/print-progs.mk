print-progs:
	@echo $(notdir $(TEST_GEN_PROGS))
